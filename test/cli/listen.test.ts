/**
 * `appliance-cloud listen` against a running sandbox, both real processes (issue 19 item 3): it takes
 * the sandbox service's webhooks, verifies and prints a device push, forwards it unchanged to a real
 * loopback receiver, and puts the callback URL back when stopped.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getModel, parsedProfile } from '../../src/catalog/index.js';
import { verify } from '../../src/delivery/sign.js';
import { USER_AGENT } from '../../src/delivery/sender.js';
import { newMessageId, systemClock } from '../../src/ids.js';
import { startHttpServer, type LoopbackServer } from '../delivery/loopback.js';
import { ADMIN_TOKEN, createWorld, testApp } from '../helpers/app.js';
import { exitCode, runCli, startCli, stdoutUntil } from './process.js';

describe('appliance-cloud listen (real processes)', () => {
  let dir: string;
  let env: Record<string, string>;
  let forwardTarget: LoopbackServer;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'appliance-cloud-listen-'));
    env = { DATABASE_URL: `sqlite:${join(dir, 'world.db')}`, PORT: '0' };
    forwardTarget = await startHttpServer((_request, response) => response.writeHead(204).end());
  });
  afterAll(async () => {
    await forwardTarget.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('receives, verifies and forwards a push of the running sandbox, then puts the callback URL back', async () => {
    const sandbox = startCli(['sandbox'], env);
    try {
      const banner = await stdoutUntil(sandbox, /^\s+curl .*\n/m);
      expect(banner).toContain('webhooks to     none set: messages wait, held, until a callback URL is set.');
      expect(banner).toContain('Run `npx appliance-cloud listen` in another terminal');
      const saved = JSON.parse(readFileSync(join(dir, 'sandbox.json'), 'utf8')) as { localUrl: string; adminToken: string; webhookSecret: string; serviceId: string };
      const washer = /^\s+DEVICE_WASHER\s+(\S+)$/m.exec(banner)![1]!;
      const curl = /^\s+curl .*$/m.exec(banner)![0];
      const partnerHeaders = Object.fromEntries([...curl.matchAll(/-H '([^:]+): ([^']*)'/g)].map((m) => [m[1]!, m[2]!]));
      const partner = (method: string, path: string) =>
        fetch(`${saved.localUrl}${path}`, { method, headers: { ...partnerHeaders, 'x-message-id': newMessageId() } });
      const admin = async (method: string, path: string, body?: unknown) => {
        const response = await fetch(`${saved.localUrl}${path}`, {
          method,
          headers: { authorization: `Bearer ${saved.adminToken}`, 'x-message-id': newMessageId(), ...(body ? { 'content-type': 'application/json' } : {}) },
          ...(body ? { body: JSON.stringify(body) } : {}),
        });
        return ((await response.json()) as { response: Record<string, unknown> }).response;
      };

      // Found from the data directory alone: where the sandbox listens, its admin token, service and secret.
      const listen = startCli(['listen', '--forward-to', forwardTarget.url], { DATABASE_URL: env.DATABASE_URL! });
      try {
        const ready = await stdoutUntil(listen, /^Ready: .*\n/m);
        const receiverUrl = /go to (http:\/\/127\.0\.0\.1:\d+\/webhooks) \(none was set\), forwarded to /.exec(ready)![1]!;
        expect(await admin('GET', `/admin/services/${saved.serviceId}`)).toMatchObject({ callbackUrl: receiverUrl, eventCallbackUrl: null });

        // The partner's way to hear of a push: load the device list, then subscribe.
        expect((await partner('GET', '/devices')).status).toBe(200);
        expect((await partner('POST', `/push/${washer}`)).status).toBe(200);
        const pushCode = parsedProfile(getModel('DEVICE_WASHER')!).pushCodes[0]!;
        await admin('POST', `/admin/devices/${washer}/push`, { pushCode });
        const printed = await stdoutUntil(listen, new RegExp(`DEVICE_PUSH  ${washer}  ${pushCode}  signature ✓  → forwarded, 204\\n`));
        expect(printed).toMatch(/^\d{2}:\d{2}:\d{2}  DEVICE_PUSH /m);

        // Forwarded as sent: the signature still verifies over the raw body, and the headers came along.
        expect(forwardTarget.received).toHaveLength(1);
        const [forwarded] = forwardTarget.received;
        expect(verify({ body: forwarded!.body, headers: forwarded!.headers, secrets: [saved.webhookSecret], clock: systemClock })).toEqual({ ok: true });
        expect(forwarded!.headers['user-agent']).toBe(USER_AGENT);
        expect(JSON.parse(forwarded!.body)).toMatchObject({ push: { pushType: 'DEVICE_PUSH', deviceId: washer, pushCode, serviceId: saved.serviceId } });
      } finally {
        listen.kill('SIGINT');
      }
      expect(await exitCode(listen)).toBe(0);
      expect(await admin('GET', `/admin/services/${saved.serviceId}`)).toMatchObject({ callbackUrl: null, eventCallbackUrl: null });
    } finally {
      sandbox.kill('SIGTERM');
    }
    expect(await exitCode(sandbox)).toBe(0);
  }, 120_000);

  it('a --port that is taken is one line and exit 2, as serve says of PORT, and leaves the callback URL as it was', async () => {
    const t = await testApp();
    try {
      const world = await createWorld(t.ctx, { deviceTypes: [] });
      const url = await t.app.listen({ host: '127.0.0.1', port: 0 });
      const port = String(forwardTarget.port);
      const { code, stdout, stderr } = await runCli(
        ['listen', '--url', url, '--admin-token', ADMIN_TOKEN, '--service-id', world.serviceId, '--webhook-secret', 'whsec_x', '--port', port],
      );
      expect({ code, stdout, stderr }).toEqual({
        code: 2,
        stdout: '',
        stderr: `appliance-cloud: --port: cannot listen on 127.0.0.1:${port} (EADDRINUSE); name a free port, or leave --port out for any\n`,
      });
      expect((await t.ctx.store.getService(world.serviceId))!.callbackUrl).toBeNull();
    } finally {
      await t.close();
    }
  });

  it('exits 1 when it cannot put the callback URLs back as it stops (the server is gone), saying so', async () => {
    const t = await testApp();
    let closed = false;
    try {
      const world = await createWorld(t.ctx, { deviceTypes: [] });
      const url = await t.app.listen({ host: '127.0.0.1', port: 0 });
      const listen = startCli(['listen', '--url', url, '--admin-token', ADMIN_TOKEN, '--service-id', world.serviceId, '--webhook-secret', 'whsec_x']);
      await stdoutUntil(listen, /^Ready: .*\n/m);
      await t.close();
      closed = true;
      listen.kill('SIGINT');
      const [code, stderr] = await Promise.all([exitCode(listen), new Promise<string>((resolve) => {
        let text = '';
        listen.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
        listen.once('close', () => resolve(text));
      })]);
      expect({ code, stderr }).toEqual({ code: 1, stderr: expect.stringMatching(/^appliance-cloud: could not put the callback URLs back: /) });
    } finally {
      if (!closed) await t.close();
    }
  });

  it.each(['localhost:3000/hooks', 'ftp://localhost/hooks', 'hooks'])('a --forward-to that is no http(s) URL (%s) is one line and exit 2, before anything else', async (forwardTo) => {
    // No server at --url: the forward target is judged first, so this says nothing of it.
    const { code, stdout, stderr } = await runCli(['listen', '--forward-to', forwardTo, '--url', 'http://127.0.0.1:9', '--admin-token', 't', '--service-id', 's', '--webhook-secret', 'w']);
    expect({ code, stdout, stderr }).toEqual({
      code: 2,
      stdout: '',
      stderr: `appliance-cloud: --forward-to must be an http:// or https:// URL, as in http://localhost:3000/hooks; got "${forwardTo}"\n`,
    });
  });
});
