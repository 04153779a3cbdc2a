/**
 * `appliance-cloud sim devices` as a real process against `appliance-cloud serve` as another: the
 * appliances register through the admin API, connect to the server's embedded broker with their
 * secrets, answer a partner's control over MQTT, and report what their engine computes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newMessageId } from '../../src/ids.js';
import { exitCode, runCli, startCli, stdoutUntil } from '../cli/process.js';
import { freePort } from '../helpers/ports.js';

const ADMIN_TOKEN = 'sim-mqtt-admin-token';
const MAIN = { location: { locationName: 'MAIN' } };

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await sleep(50);
  }
}

type Envelope = { response?: any; error?: { code: string; message: string } };

describe('sim devices: virtual appliances as MQTT clients in a process of their own', () => {
  let dir: string;
  let server: ReturnType<typeof startCli>;
  let url: string;
  let mqttUrl: string;

  const admin = async (method: string, path: string, body?: unknown): Promise<any> => {
    const res = await fetch(`${url}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'x-message-id': newMessageId(), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const envelope = (await res.json()) as Envelope;
    if (envelope.error) throw new Error(`${method} ${path}: ${envelope.error.code} ${envelope.error.message}`);
    return envelope.response;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'appliance-cloud-sim-mqtt-'));
    const mqttPort = await freePort();
    mqttUrl = `mqtt://127.0.0.1:${mqttPort}`;
    server = startCli(['serve'], {
      ADMIN_TOKEN,
      DATABASE_URL: `sqlite:${join(dir, 'cloud.db')}`,
      HOST: '127.0.0.1',
      PORT: '0',
      MQTT_PORT: String(mqttPort),
      LOG_LEVEL: 'info',
    });
    const log = await stdoutUntil(server, /"listening":"http:\/\/127\.0\.0\.1:\d+"/);
    url = /"listening":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(log)![1]!;
  });

  afterAll(async () => {
    server.kill('SIGTERM');
    expect(await exitCode(server)).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  });

  it('registers, connects, answers control through MQTT, reports its engine, and says offline on SIGTERM', async () => {
    const { serviceId, serviceKey } = await admin('POST', '/services', { name: 'sim test', allowedDevices: ['DEVICE_WASHER', 'DEVICE_CEILING_FAN'] });
    const { userNumber } = await admin('POST', '/users', { countryCode: 'KR' });
    const { accessToken } = await admin('POST', `/users/${userNumber}/tokens`, { serviceId });
    const partner = async (method: string, path: string, body?: unknown): Promise<Envelope & { status: number }> => {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${accessToken}`,
          'x-country-code': 'KR',
          'x-message-id': newMessageId(),
          'x-service-id': serviceId,
          'x-service-key': serviceKey,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, ...((await res.json()) as Envelope) };
    };

    // 600 simulated minutes per real one: a step every 100 ms. The devices speak MQTT 5, which the
    // embedded broker translates for aedes (3.1.1 is the in-process tests' default).
    const sim = startCli(
      ['sim', 'devices', '--mqtt-url', mqttUrl, '--mqtt-version', '5', '--user', userNumber, '--types', 'DEVICE_WASHER,DEVICE_CEILING_FAN', '--count', '2', '--time-scale', '600', '--url', url, '--admin-token', ADMIN_TOKEN],
      { LOG_LEVEL: 'warn' },
    );
    try {
      const printed = JSON.parse((await stdoutUntil(sim, /\n/)).trim()) as { devices: { deviceId: string; secret: string; deviceType: string }[] };
      expect(printed.devices.map((d) => d.deviceType)).toEqual(['DEVICE_WASHER', 'DEVICE_WASHER', 'DEVICE_CEILING_FAN', 'DEVICE_CEILING_FAN']);
      const ids = printed.devices.map((d) => d.deviceId);

      for (const deviceId of ids) {
        const { device, online } = await admin('GET', `/devices/${deviceId}`);
        expect([device.virtual, online]).toEqual([false, true]);
      }
      const list = await partner('GET', '/devices');
      expect(list.response.map((d: { deviceId: string }) => d.deviceId).sort()).toEqual([...ids].sort());

      const washer = ids[0]!;
      const read = await partner('GET', `/devices/${washer}`);
      expect([read.status, read.response[0].runState.currentState]).toEqual([200, 'INITIAL']);

      // The command goes to the sim process over MQTT; its answer is what the partner gets and the cloud stores.
      const started = await partner('POST', `/devices/${washer}`, { ...MAIN, operation: { washerOperationMode: 'START' } });
      expect(started.status, JSON.stringify(started)).toBe(200);
      // The engine steps every 100 ms, so by this read it may have moved on from the command's DETECTING, 50 minutes.
      const afterCommand = await partner('GET', `/devices/${washer}`);
      expect(afterCommand.response[0].runState.currentState).toMatch(/^(DETECTING|RUNNING)$/);
      expect(afterCommand.response[0].timer.remainMinute).toBeLessThanOrEqual(50);

      // Nobody but the sim's engine counts the cycle down: a stored status it reported over MQTT.
      await until(() => partner('GET', `/devices/${washer}`), (r) => r.response[0].timer.remainMinute < 50, 'the engine to count down');

      const fan = ids[2]!;
      const turned = await partner('POST', `/devices/${fan}`, { airFlow: { windStrength: 'LOW' } });
      expect(turned.status, JSON.stringify(turned)).toBe(200);
      expect((await admin('GET', `/devices/${fan}`)).status.airFlow.windStrength).toBe('LOW');
      // A value the profile has no such thing as: refused by the cloud before any device sees it.
      expect((await partner('POST', `/devices/${fan}`, { airFlow: { windStrength: 'HURRICANE' } })).error!.code).toBe('1102');
    } finally {
      sim.kill('SIGTERM');
    }
    expect(await exitCode(sim)).toBe(0);
    const devices = (await partner('GET', '/devices')).response as { deviceId: string }[];
    for (const { deviceId } of devices) {
      await until(() => admin('GET', `/devices/${deviceId}`), (d) => d.online === false, `${deviceId} offline`);
    }
    expect((await partner('GET', `/devices/${devices[0]!.deviceId}`)).error!.code).toBe('1222');
  }, 60_000);

  it('prints the devices it registered before a registration failed, with their secrets, and says so in its one line', async () => {
    const { userNumber } = await admin('POST', '/users', { countryCode: 'KR' });
    // The server goes away after the first registration: in front of it, a proxy that forwards one request, then drops every connection.
    let forwarded = 0;
    const proxy = createServer((request, response) => {
      if (forwarded++ > 0) return request.socket.destroy();
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', async () => {
        const headers = Object.fromEntries(['authorization', 'content-type', 'x-message-id'].map((name) => [name, String(request.headers[name])]));
        const answer = await fetch(`${url}${request.url}`, { method: request.method, headers, body: Buffer.concat(chunks) });
        response.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
      const failed = await runCli(['sim', 'devices', '--mqtt-url', mqttUrl, '--user', userNumber, '--types', 'DEVICE_CEILING_FAN', '--count', '3', '--url', proxyUrl, '--admin-token', ADMIN_TOKEN]);
      expect(failed.code).toBe(2);
      expect(failed.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(/^appliance-cloud: --url: no appliance-cloud server answers at .*; the 1 device\(s\) registered before it are printed above, to connect later with --devices <file>$/),
      ]);
      const printed = JSON.parse(failed.stdout.trim()) as { mqttUrl: string; devices: { deviceId: string; secret: string; deviceType: string }[] };
      expect(printed.mqttUrl).toBe(mqttUrl);
      expect(printed.devices).toEqual([expect.objectContaining({ deviceType: 'DEVICE_CEILING_FAN', secret: expect.any(String) })]);
      expect((await admin('GET', `/devices/${printed.devices[0]!.deviceId}`)).online).toBe(false);
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
  }, 60_000);

  it('prints the devices it registered when they cannot connect, which connect later with --devices, and exits 2 with one line', async () => {
    const { userNumber } = await admin('POST', '/users', { countryCode: 'KR' });
    const failed = await runCli(['sim', 'devices', '--mqtt-url', 'mqtt://127.0.0.1:1', '--user', userNumber, '--types', 'DEVICE_CEILING_FAN', '--url', url, '--admin-token', ADMIN_TOKEN]);
    expect(failed.code).toBe(2);
    expect(failed.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^appliance-cloud: --mqtt-url mqtt:\/\/127\.0\.0\.1:1: device \S+ could not connect: connect ECONNREFUSED 127\.0\.0\.1:1; the devices registered are printed above, to connect later with --devices <file>$/),
    ]);
    const printed = JSON.parse(failed.stdout.trim()) as { devices: { deviceId: string; secret: string }[] };
    const file = join(dir, 'devices.json');
    writeFileSync(file, JSON.stringify(printed.devices));
    const sim = startCli(['sim', 'devices', '--mqtt-url', mqttUrl, '--devices', file], { LOG_LEVEL: 'warn' });
    try {
      await stdoutUntil(sim, /\n/);
      expect((await admin('GET', `/devices/${printed.devices[0]!.deviceId}`)).online).toBe(true);
    } finally {
      sim.kill('SIGTERM');
    }
    expect(await exitCode(sim)).toBe(0);
  }, 60_000);
});
