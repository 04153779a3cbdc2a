/**
 * The crash test of DESIGN C: a server accepts a burst of messages while their receiver is down, is
 * killed with SIGKILL, restarts on the same SQLite file with the receiver up, and every accepted
 * message arrives — in order, signed, any duplicate under the same webhook-id with the same body.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { newMessageId } from '../../src/ids.js';
import { waitFor } from './harness.js';
import { freePort } from '../helpers/ports.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ADMIN = { authorization: 'Bearer crash-test-admin' };
const BURST = 200;
// Long enough that the first message is still being retried when the process is killed.
const SCHEDULE = Array.from({ length: 60 }, () => '250ms').join(',');

interface Arrival {
  id: string;
  sequence: number;
  body: string;
  verified: boolean;
}

describe('a crash with deliveries pending (DESIGN C)', () => {
  const children: ChildProcessWithoutNullStreams[] = [];
  const servers: Server[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'delivery-crash-'));
  afterEach(async () => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
    await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function start(database: string): Promise<{ child: ChildProcessWithoutNullStreams; url: string }> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/delivery/crash-server.ts', database, SCHEDULE], { cwd: ROOT });
    children.push(child);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const line = /^(\{.*\})$/m.exec(stdout)?.[1];
        if (line) resolve((JSON.parse(line) as { url: string }).url);
      });
      child.on('exit', (code) => reject(new Error(`server exited ${code} before listening: ${stderr}`)));
    });
    return { child, url };
  }

  async function call(base: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; json: { response?: Record<string, unknown> } }> {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...headers, 'x-message-id': newMessageId(), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, json: (await res.json()) as { response?: Record<string, unknown> } };
  }

  const exited = (child: ChildProcessWithoutNullStreams) =>
    new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.on('exit', (code) => resolve(code))));

  it('delivers every accepted message after SIGKILL and a restart', { timeout: 90_000 }, async () => {
    const database = join(dir, 'store.db');
    const port = await freePort();
    const first = await start(database);
    const admin = (method: string, path: string, body?: unknown) => call(first.url, method, path, ADMIN, body);

    // A service whose receiver is down, a user, a ceiling fan with an event subscription.
    const service = (await admin('POST', '/admin/services', { name: 'crash', allowedDevices: ['DEVICE_CEILING_FAN'], callbackUrl: `http://127.0.0.1:${port}/hook` })).json.response!;
    const user = (await admin('POST', '/admin/users', { countryCode: 'KR' })).json.response!;
    const device = (await admin('POST', `/admin/users/${user.userNumber}/devices`, { deviceType: 'DEVICE_CEILING_FAN', alias: 'Fan', virtual: true })).json.response!;
    const token = (await admin('POST', `/admin/users/${user.userNumber}/tokens`, { serviceId: service.serviceId })).json.response!;
    const partner = { authorization: `Bearer ${token.accessToken}`, 'x-country-code': 'KR', 'x-service-id': String(service.serviceId), 'x-service-key': String(service.serviceKey) };
    expect((await call(first.url, 'GET', '/devices', partner)).status).toBe(200);
    expect((await call(first.url, 'POST', `/event/${device.deviceId}`, partner)).status).toBe(200);

    const strengths = ['HIGH', 'LOW', 'MID', 'TURBO'];
    let accepted = 0;
    for (let i = 0; i < BURST; i++) {
      const res = await admin('POST', `/admin/devices/${device.deviceId}/report`, { airFlow: { windStrength: strengths[i % 4] } });
      if (res.status === 200) accepted++;
    }
    const listed = (await admin('GET', `/admin/services/${service.serviceId}/messages?limit=1000`)).json.response as unknown as { messageId: string }[];
    const acceptedIds = new Set(listed.map((m) => m.messageId));
    expect(acceptedIds.size).toBe(accepted);
    expect(accepted).toBeGreaterThan(BURST / 2);

    first.child.kill('SIGKILL');
    await exited(first.child);

    const secret = String(service.webhookSecret);
    const arrivals: Arrival[] = [];
    servers.push(await receiveOn(port, (headers, body) => arrivals.push({ ...headers, body, verified: verifies(secret, body, headers.raw) })));
    const second = await start(database);
    await waitFor('every accepted message to arrive', () => (acceptedIds.size === new Set(arrivals.map((a) => a.id)).size ? true : undefined), 60_000);

    expect(arrivals.every((a) => a.verified)).toBe(true);
    expect(arrivals.every((a) => acceptedIds.has(a.id))).toBe(true);
    // A duplicate is the same message again: same webhook-id, same body.
    const bodies = new Map<string, Set<string>>();
    for (const a of arrivals) bodies.set(a.id, (bodies.get(a.id) ?? new Set()).add(a.body));
    expect([...bodies.values()].every((set) => set.size === 1)).toBe(true);
    // In the order of the device's reports: each message first arrives after every earlier one.
    const seen = arrivals.filter((a, i) => arrivals.findIndex((b) => b.id === a.id) === i).map((a) => a.sequence);
    expect(seen).toEqual([...seen].sort((x, y) => x - y));

    // The server's /metrics carries the deliveries, nothing left pending.
    // crash-server.ts's admin token: /metrics is an operator page.
    const metrics = await (await fetch(`${second.url}/metrics`, { headers: { authorization: 'Bearer crash-test-admin' } })).text();
    expect(metrics).toMatch(/^deliveries_total\{outcome="delivered",service="[^"]+"\} \d+$/m);
    expect(metrics).toMatch(/^deliveries_pending 0$/m);

    second.child.kill('SIGTERM');
    expect(await exited(second.child)).toBe(0);
  });
});

interface ArrivalHeaders {
  id: string;
  sequence: number;
  raw: Record<string, string>;
}

async function receiveOn(port: number, onRequest: (headers: ArrivalHeaders, body: string) => void): Promise<Server> {
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const raw = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)]));
      onRequest({ id: raw['webhook-id'] ?? '', sequence: Number(raw['webhook-sequence']), raw }, body);
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

function verifies(secret: string, body: string, headers: Record<string, string>): boolean {
  try {
    new Webhook(secret).verify(body, headers);
    return true;
  } catch {
    return false;
  }
}
