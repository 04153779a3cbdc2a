/** The client against a real sandbox process: every operation of DESIGN A.5 and the error class. */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApplianceCloud, ApplianceCloudError, isApplianceCloudError, type WasherStatus } from '@appliance-cloud/client';
import { startSandbox, type Sandbox } from './sandbox.js';

const run = promisify(execFile);
const TSC = fileURLToPath(new URL('../../../node_modules/typescript/bin/tsc', import.meta.url));

describe('ApplianceCloud against a sandbox process', () => {
  let sandbox: Sandbox;
  let client: ApplianceCloud;

  beforeAll(async () => {
    sandbox = await startSandbox();
    client = sandbox.client();
  });
  afterAll(() => sandbox?.stop());

  it('lists the devices of every type, then reads a profile and a versioned status', async () => {
    const devices = await client.listDevices();
    expect(devices.map((d) => d.deviceInfo.deviceType).sort()).toEqual(sandbox.devices.map((d) => d.deviceType).sort());
    const washerId = sandbox.deviceOf('DEVICE_WASHER');
    const profile = await client.getProfile<'DEVICE_WASHER'>(washerId);
    expect(profile.property[0]?.location.locationName).toBe('MAIN');
    const { status, version } = await client.getStatusWithVersion<'DEVICE_WASHER'>(washerId);
    expect(Number.isInteger(version)).toBe(true);
    expect(status[0]?.runState?.currentState).toBe('INITIAL');
  });

  it('tells where the service stands in its rate limit, as the latest answer said', async () => {
    const fresh = sandbox.client();
    expect(fresh.rateLimit).toBeUndefined();
    await fresh.getUser();
    // The sandbox's bucket (RATE_LIMIT_BURST, 2000), less this call at least.
    expect(fresh.rateLimit).toEqual({ limit: 2000, remaining: expect.any(Number) });
    expect(fresh.rateLimit!.remaining).toBeLessThan(2000);
  });

  it('types a listed device by its device type, so that client.device takes it as it is (no cast)', async () => {
    const [first] = await client.listDevices();
    const handle = client.device(first!.deviceInfo.deviceType, first!.deviceId);
    expect(await handle.status()).toEqual(await client.getStatus(first!.deviceId));
  });

  it("types what it serves: every device's profile and status type-check as its type's ProfileOf and StatusOf", async () => {
    const lines = [`import type { ProfileOf, StatusOf } from '${fileURLToPath(new URL('../src/index.js', import.meta.url))}';`];
    for (const { deviceId, deviceInfo } of await client.listDevices()) {
      const type = JSON.stringify(deviceInfo.deviceType);
      lines.push(`export const profile_${lines.length}: ProfileOf<${type}> = ${JSON.stringify(await client.getProfile(deviceId))};`);
      lines.push(`export const status_${lines.length}: StatusOf<${type}> = ${JSON.stringify(await client.getStatus(deviceId))};`);
    }
    const dir = mkdtempSync(join(tmpdir(), 'appliance-cloud-client-types-'));
    try {
      writeFileSync(join(dir, 'served.ts'), lines.join('\n'));
      const options = { strict: true, noEmit: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2023', 'DOM'], types: [] };
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: options, files: ['served.ts'] }));
      const checked = await run(process.execPath, [TSC, '-p', dir]).catch((error: { stdout: string }) => error);
      expect('stdout' in checked ? checked.stdout : '').toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('controls a device through a typed handle and answers its status after the command', async () => {
    const fridge = client.device('DEVICE_REFRIGERATOR', sandbox.deviceOf('DEVICE_REFRIGERATOR'));
    const status = await fridge.control({ temperatureInUnits: { locationName: 'FRIDGE', targetTemperatureC: 4 } });
    expect(status.temperatureInUnits?.find((e) => e.locationName === 'FRIDGE')?.targetTemperatureC).toBe(4);
    const washer: WasherStatus = await client.getStatus<'DEVICE_WASHER'>(sandbox.deviceOf('DEVICE_WASHER'));
    expect(Array.isArray(washer)).toBe(true);
  });

  it("throws one error class carrying the server's code, HTTP status, message and the request's message id", async () => {
    const washer = client.device('DEVICE_WASHER', sandbox.deviceOf('DEVICE_WASHER'));
    const refused = await washer.control({ location: { locationName: 'MAIN' }, timer: { relativeHourToStart: 999 } }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApplianceCloudError);
    const error = refused as ApplianceCloudError;
    expect(error.code).toBe('1102');
    expect(error.httpStatus).toBe(400);
    expect(error.codeName).toBe('UNACCEPTABLE_PARAMETERS');
    expect(error.message).toContain('relativeHourToStart');
    expect(error.messageId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const unknown = await client.getStatus('no-such-device').catch((e: unknown) => e);
    expect(isApplianceCloudError(unknown, '1205')).toBe(true);
  });

  it('sends x-conditional-control when asked: a command the state refuses answers 2301–2305', async () => {
    const dryer = client.device('DEVICE_DRYER', sandbox.deviceOf('DEVICE_DRYER'));
    await sandbox.admin('POST', `/admin/devices/${dryer.deviceId}/sim`, { action: 'remote-control-off' });
    const refused = await dryer.control({ operation: { dryerOperationMode: 'START' } }, { conditional: true }).catch((e: unknown) => e);
    expect(isApplianceCloudError(refused, '2301')).toBe(true);
  });

  it('subscribes, lists and unsubscribes pushes and events; the wire null is an empty list', async () => {
    const deviceId = sandbox.deviceOf('DEVICE_OVEN');
    expect(await client.listPushSubscriptions()).toEqual([]);
    expect(await client.listEventSubscriptions()).toEqual([]);
    await client.subscribePush(deviceId);
    const again = await client.subscribePush(deviceId).catch((e: unknown) => e);
    expect(isApplianceCloudError(again, '1207')).toBe(true);
    await client.subscribeEvents(deviceId, { unit: 'MINUTE', timer: 30 });
    expect(await client.listPushSubscriptions()).toEqual([{ deviceId }]);
    const [event] = await client.listEventSubscriptions();
    expect(event?.deviceId).toBe(deviceId);
    expect(Date.parse(event!.expiresAt) - Date.now()).toBeGreaterThan(25 * 60_000);
    await client.unsubscribePush(deviceId);
    await client.unsubscribeEvents(deviceId);
    expect(await client.listEventSubscriptions()).toEqual([]);
  });

  it("reads the token's user, takes the token from a provider, and disconnects the user last", async () => {
    let asked = 0;
    const provided = sandbox.client({ tokenProvider: async () => (asked++, sandbox.credentials.accessToken) });
    expect(await provided.getUser()).toEqual({ userNumber: sandbox.credentials.userNumber });
    expect(asked).toBe(1);
    await client.disconnectUser();
    const after = await client.listDevices().catch((e: unknown) => e);
    expect(isApplianceCloudError(after, '1202')).toBe(true);
  });
});

describe('behind a proxy that compresses: its ETag is weak (W/"<version>"), as nginx makes it', () => {
  let sandbox: Sandbox;
  let proxy: Server;
  let proxyUrl: string;

  beforeAll(async () => {
    sandbox = await startSandbox();
    proxy = createServer(async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => name !== 'host')) as Record<string, string>;
      const answer = await fetch(new URL(request.url!, sandbox.url), { method: request.method!, headers, ...(chunks.length ? { body: Buffer.concat(chunks) } : {}) });
      const etag = answer.headers.get('etag');
      response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json', ...(etag ? { etag: `W/${etag}` } : {}) });
      response.end(Buffer.from(await answer.arrayBuffer()));
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    proxy?.close();
    await sandbox?.stop();
  });

  it("reads the status version from it, the same as the server's own", async () => {
    const direct = sandbox.client();
    const behind = sandbox.client({ baseUrl: proxyUrl });
    await behind.listDevices();
    const fridge = sandbox.deviceOf('DEVICE_REFRIGERATOR');
    const { version } = await behind.getStatusWithVersion(fridge);
    expect(version).toBe((await direct.getStatusWithVersion(fridge)).version);
    expect(Number.isInteger(version)).toBe(true);
  });
});

describe('ApplianceCloud options', () => {
  it('names the base URL from region, phase and domain (DESIGN A.1)', () => {
    const common = { serviceId: 's', serviceKey: 'k', countryCode: 'KR', accessToken: 't' };
    expect(new ApplianceCloud({ region: 'KIC', phase: 'QA', domain: 'example.com', ...common }).baseUrl).toBe('https://kic-qa-ext.example.com');
    expect(new ApplianceCloud({ region: 'EIC', phase: 'OP', domain: 'example.com', ...common }).baseUrl).toBe('https://eic-ext.example.com');
  });
});
