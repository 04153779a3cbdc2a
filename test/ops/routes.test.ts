/** GET /health, /ready and /metrics (DESIGN E), on whichever database the suite runs. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { adminHeaders, createWorld, testApp, type TestApp } from '../helpers/app.js';

describe('operations endpoints', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await testApp();
  });
  afterEach(() => t.close());

  it('/health answers alive with the version, /ready once the store answers', async () => {
    const health = await t.app.inject({ method: 'GET', url: '/health' });
    expect(health.statusCode).toBe(200);
    expect(health.json().response).toMatchObject({ status: 'ok', version: t.ctx.config.version });
    const ready = await t.app.inject({ method: 'GET', url: '/ready' });
    expect([ready.statusCode, ready.json().response]).toEqual([200, { store: true, broker: true }]);
  });

  it('/metrics has request latency per route and connected devices; on PostgreSQL, the statements sent', async () => {
    const world = await createWorld(t.ctx);
    await t.app.inject({ method: 'GET', url: '/devices', headers: world.headers() });
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics', headers: adminHeaders() });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toMatch(/http_request_duration_seconds_count\{[^}]*route="\/devices"[^}]*\} 1/);
    expect(metrics.body).toMatch(/^devices_connected \d+$/m);
    const statements = /^store_statements_total (\d+)$/m.exec(metrics.body);
    if (t.ctx.store.capabilities.statementCounts) expect(Number(statements?.[1])).toBeGreaterThan(0);
    else expect(statements).toBeNull();
  });

  it('/metrics is an operator page: without the admin token, or with a wrong one, it answers 1301 and shows nothing', async () => {
    for (const headers of [{}, { authorization: 'Bearer not-the-token' }, { authorization: 'test-admin-token' }]) {
      const res = await t.app.inject({ method: 'GET', url: '/metrics', headers });
      expect([res.statusCode, res.json().error.code]).toEqual([401, '1301']);
      expect(res.json().error.message).toMatch(/^(\/metrics needs header Authorization: Bearer <ADMIN_TOKEN>|The admin token is wrong)\.$/);
      expect(res.body).not.toContain('http_request_duration_seconds');
    }
  });
});
