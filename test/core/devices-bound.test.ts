/**
 * DESIGN J: reports may carry properties the profile does not declare, but a device's stored status
 * is at most 32 KiB and 8 levels deep; a report (admin API or MQTT) or a command result that would
 * exceed it is refused — 1102 for a report, counted by its source, 2208 for a control — and nothing of it is stored.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MAX_STATUS_BYTES } from '../../src/catalog/limits.js';
import type { DeviceClient } from '../../src/device-protocol/device-client.js';
import { startCloud, type Cloud } from '../gateway/fixture.js';
import { adminHeaders, callAdmin, createWorld, testApp, type TestApp, type World } from '../helpers/app.js';

const waitFor = <T>(check: () => T | Promise<T>) => vi.waitFor(check, { timeout: 5000, interval: 10 });

/** A JSON value of objects nested `levels` deep. */
const nested = (levels: number): unknown => (levels === 0 ? 'bottom' : { a: nested(levels - 1) });
const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/** The case: 40 reports of 60 KB, each a new undeclared property, each under the 64 KiB payload limit. */
const BIG_REPORTS = Array.from({ length: 40 }, (_, i) => ({ [`blob${i}`]: 'x'.repeat(60_000) }));
/** 40 reports of 1.5 KB, each a new undeclared property: the status grows until the bound stops it. */
const GROWING_REPORTS = Array.from({ length: 40 }, (_, i) => ({ [`note${i}`]: 'y'.repeat(1500) }));

const SIZE_REFUSAL = /^The report is refused: the status would be \d+ bytes of JSON; a device's status is at most 32768 bytes \(32 KiB\)\.$/;
const DEPTH_REFUSAL = "The report is refused: the status would nest more than 8 levels deep; a device's status is at most 8 levels deep.";

describe('the status bound over HTTP (DESIGN J)', () => {
  let t: TestApp;
  let world: World;

  beforeAll(async () => {
    t = await testApp({ settings: { RATE_LIMIT_PER_SECOND: '0' } });
    world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_CEILING_FAN', 'DEVICE_WASHER', 'DEVICE_DEHUMIDIFIER', 'DEVICE_DRYER'] });
    expect((await t.app.inject({ method: 'GET', url: '/devices', headers: world.headers() })).statusCode).toBe(200);
  });
  afterAll(() => t.close());

  const deviceOf = (type: string) => world.devices.find((d) => d.deviceType === type)!.deviceId;
  const fan = () => deviceOf('DEVICE_CEILING_FAN');
  const report = (deviceId: string, body: unknown) => callAdmin(t.app, 'POST', `/admin/devices/${deviceId}/report`, body);
  const read = (deviceId: string) => t.app.inject({ method: 'GET', url: `/devices/${deviceId}`, headers: world.headers() });
  const control = (deviceId: string, command: unknown) =>
    t.app.inject({ method: 'POST', url: `/devices/${deviceId}`, headers: world.headers({ 'content-type': 'application/json' }), payload: JSON.stringify(command) });
  /** device_reports_rejected_total{source="admin"} as /metrics serves it. */
  const rejected = async () => {
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics', headers: adminHeaders() });
    return Number(/^device_reports_rejected_total\{source="admin"\} (\d+)$/m.exec(metrics.body)?.[1] ?? 0);
  };

  it('refuses and counts each of 40 admin reports of 60 KB with 1102 naming the limit, and the status stays as it was', async () => {
    const deviceId = deviceOf('DEVICE_DEHUMIDIFIER');
    const before = await t.ctx.devices.state(deviceId);
    const count = await rejected();
    for (const body of BIG_REPORTS) {
      const res = await report(deviceId, body);
      expect([res.statusCode, res.json().error.code]).toEqual([400, '1102']);
      expect(res.json().error.message).toMatch(SIZE_REFUSAL);
    }
    expect(await rejected()).toBe(count + 40);
    expect(await t.ctx.devices.state(deviceId)).toEqual(before);
    expect((await read(deviceId)).body.length).toBeLessThan(1024);
  });

  it('keeps growing reports until the next would pass 32 KiB, then refuses every later one', async () => {
    const deviceId = deviceOf('DEVICE_DRYER');
    const start = await t.ctx.devices.state(deviceId);
    const codes: number[] = [];
    for (const body of GROWING_REPORTS) codes.push((await report(deviceId, body)).statusCode);
    const accepted = codes.filter((c) => c === 200).length;
    expect(codes).toEqual([...Array(accepted).fill(200), ...Array(40 - accepted).fill(400)]);
    expect(accepted).toBeGreaterThan(15);
    const end = await t.ctx.devices.state(deviceId);
    expect(end.version).toBe(start.version + accepted);
    const stored = await t.ctx.store.getDeviceStatusJson(deviceId);
    expect(Buffer.byteLength(stored!.statusJson)).toBeLessThanOrEqual(MAX_STATUS_BYTES);
    // Refused because one more note would not fit, not before.
    expect(bytes(end.status) + bytes(GROWING_REPORTS[0])).toBeGreaterThan(MAX_STATUS_BYTES);
    // What a partner reads is the stored status, within the bound.
    const served = (await read(deviceId)).json().response;
    expect(served).toEqual(end.status);
  });

  it('keeps an undeclared value that makes the status 8 levels deep and refuses one of 9, in a location entry too', async () => {
    const deviceId = fan();
    expect((await report(deviceId, { deep: nested(7) })).statusCode).toBe(200);
    const before = await t.ctx.devices.state(deviceId);
    for (const body of [{ deep: nested(8) }, { deeper: nested(9) }]) {
      const res = await report(deviceId, body);
      expect([res.statusCode, res.json().error]).toEqual([400, { code: '1102', message: DEPTH_REFUSAL }]);
    }
    expect(await t.ctx.devices.state(deviceId)).toEqual(before);
    // The washer's status is an array of location entries: the array is the first level.
    const entry = (levels: number) => ({ location: { locationName: 'MAIN' }, deep: nested(levels) });
    const washer = deviceOf('DEVICE_WASHER');
    expect((await report(washer, entry(6))).statusCode).toBe(200);
    expect((await report(washer, entry(7))).json().error).toEqual({ code: '1102', message: DEPTH_REFUSAL });
  });

  it('refuses a control with 2208 when the status the device answers would pass the bound, and keeps nothing of it', async () => {
    const deviceId = fan();
    // Fill the fan's status to exactly 32 KiB with windStrength LOW.
    expect((await control(deviceId, { airFlow: { windStrength: 'LOW' } })).statusCode).toBe(200);
    const current = await t.ctx.devices.state(deviceId);
    const padding = MAX_STATUS_BYTES - bytes({ ...current.status, padding: '' });
    expect((await report(deviceId, { padding: 'z'.repeat(padding) })).statusCode).toBe(200);
    expect(bytes((await t.ctx.devices.state(deviceId)).status)).toBe(MAX_STATUS_BYTES);
    // MID is as long as LOW: the status stays at the bound. TURBO is two bytes longer.
    expect((await control(deviceId, { airFlow: { windStrength: 'MID' } })).statusCode).toBe(200);
    const before = await t.ctx.devices.state(deviceId);
    const res = await control(deviceId, { airFlow: { windStrength: 'TURBO' } });
    expect([res.statusCode, res.json().error]).toEqual([
      400,
      { code: '2208', message: `Device ${deviceId} answered with a status that cannot be kept: the status would be 32770 bytes of JSON; a device's status is at most 32768 bytes (32 KiB).` },
    ]);
    expect(await t.ctx.devices.state(deviceId)).toEqual(before);
  });
});

describe('the status bound over MQTT (DESIGN B, J)', () => {
  let cloud: Cloud;
  let client: DeviceClient;
  let deviceId: string;
  /** What the device answers to the next command. */
  let answer: Record<string, unknown> = {};

  beforeAll(async () => {
    cloud = await startCloud('embedded', { controlTimeoutMs: 3000 });
    const device = await cloud.addDevice();
    deviceId = device.deviceId;
    client = await cloud.connect(device, { onCommand: () => ({ ok: true, status: answer }) });
    await waitFor(async () => expect((await cloud.ctx.devices.state(deviceId)).online).toBe(true));
    expect((await cloud.app.inject({ method: 'GET', url: '/devices', headers: cloud.world.headers() })).statusCode).toBe(200);
  });
  afterAll(() => cloud.close());

  const rejected = async () => (await cloud.metrics.reportsRejected.get()).values.find((v) => v.labels.source === 'mqtt')?.value ?? 0;
  const state = () => cloud.ctx.devices.state(deviceId);

  /** Publishes reports one by one, each handled before the next; answers which were refused. */
  async function publish(reports: unknown[]): Promise<boolean[]> {
    const refused: boolean[] = [];
    for (const body of reports) {
      const [count, version] = [await rejected(), (await state()).version];
      await client.report(body as Record<string, unknown>);
      await waitFor(async () => expect((await rejected()) > count || (await state()).version > version).toBe(true));
      refused.push((await rejected()) > count);
    }
    return refused;
  }

  it('refuses and counts each of 40 reports of 60 KB, and the status stays as it was', async () => {
    const before = await state();
    const count = await rejected();
    expect(await publish(BIG_REPORTS)).toEqual(Array(40).fill(true));
    expect(await rejected()).toBe(count + 40);
    expect(await state()).toEqual(before);
  });

  it('keeps growing reports while they fit and refuses and counts the later ones; the status stays within 32 KiB', async () => {
    const refused = await publish(GROWING_REPORTS);
    const accepted = refused.filter((r) => !r).length;
    expect(refused).toEqual([...Array(accepted).fill(false), ...Array(40 - accepted).fill(true)]);
    expect(accepted).toBeGreaterThan(15);
    expect(bytes((await state()).status)).toBeLessThanOrEqual(MAX_STATUS_BYTES);
  });

  it('refuses and counts a report with an undeclared value nested 9 levels', async () => {
    const before = await state();
    expect(await publish([{ deep: nested(9) }])).toEqual([true]);
    expect(await state()).toEqual(before);
  });

  it('answers a control with 2208 when the device answers with a status over the bound', async () => {
    answer = { operation: { dehumidifierOperationMode: 'POWER_ON' }, blob: 'x'.repeat(60_000) };
    const before = await state();
    const res = await cloud.app.inject({
      method: 'POST',
      url: `/devices/${deviceId}`,
      headers: cloud.world.headers({ 'content-type': 'application/json' }),
      payload: JSON.stringify({ operation: { dehumidifierOperationMode: 'POWER_ON' } }),
    });
    expect([res.statusCode, res.json().error.code]).toEqual([400, '2208']);
    expect(res.json().error.message).toMatch(/answered with a status that cannot be kept: the status would be \d+ bytes of JSON; a device's status is at most 32768 bytes \(32 KiB\)\.$/);
    expect(await state()).toEqual(before);
  });
});
