/**
 * DESIGN J on every channel: a name every JS object has (constructor, toString, __proto__, …), put at
 * any level of a partner's control, an admin report or push, a sandbox action or an MQTT message, is
 * just an unknown name. A refusal answers what any unknown name earns (2207 or 1102) and stores
 * nothing; an undeclared property of a report is kept, like any other.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEVICE_TYPES, getModel } from '../../src/catalog/index.js';
import type { DeviceClient } from '../../src/device-protocol/device-client.js';
import { holdsKey, INHERITED_NAMES, isUnknownTo, outsideName, positionsOf, unknownNameRefusal, type Position } from '../catalog/names.js';
import { startCloud, type Cloud } from '../gateway/fixture.js';
import { callAdmin, createWorld, testApp, type TestApp, type World } from '../helpers/app.js';

/** Every inherited name is tried first, then random names. */
const EXAMPLES: [string][] = INHERITED_NAMES.map((name) => [name]);
const POSITIONS = DEVICE_TYPES.flatMap((type) => positionsOf(getModel(type)!));
const positions = (side: Position['side'], name: string) => POSITIONS.filter((p) => p.side === side && isUnknownTo(p.model, name));

const waitFor = <T>(check: () => T | Promise<T>) => vi.waitFor(check, { timeout: 5000, interval: 10 });

/** Every device subscribed to pushes and events, so that anything a refused call stored would show as a message. */
async function subscribeAll(t: Pick<TestApp, 'ctx'>, world: World): Promise<void> {
  const now = Date.now();
  for (const { deviceId } of world.devices) {
    await t.ctx.store.addPushSubscription(world.serviceId, world.userNumber, deviceId, now);
    await t.ctx.store.upsertEventSubscription({ serviceId: world.serviceId, userNumber: world.userNumber, deviceId, expiresAt: now + 3_600_000 }, now, 100);
  }
}

/** Everything a refused call could change: every device's state, and the service's messages. */
async function fingerprint(t: Pick<TestApp, 'ctx'>, world: World): Promise<string> {
  const states = await Promise.all(world.devices.map((d) => t.ctx.store.getDeviceState(d.deviceId)));
  const messages = await t.ctx.store.listMessages(world.serviceId, { limit: 10_000 });
  return JSON.stringify([states, messages.length]);
}

describe('inherited names over HTTP (DESIGN J)', () => {
  let t: TestApp;
  let world: World;

  beforeAll(async () => {
    t = await testApp({ settings: { RATE_LIMIT_PER_SECOND: '0' } });
    world = await createWorld(t.ctx);
    expect((await t.app.inject({ method: 'GET', url: '/devices', headers: world.headers() })).statusCode).toBe(200);
    await subscribeAll(t, world);
  });
  afterAll(() => t.close());

  const deviceOf = (position: Position) => world.devices.find((d) => d.deviceType === position.model.deviceType)!.deviceId;
  const json = { 'content-type': 'application/json' };

  it('a partner control answers 2207 or 1102 as for any unknown name, and stores nothing', async () => {
    await fc.assert(
      fc.asyncProperty(outsideName, async (name) => {
        const before = await fingerprint(t, world);
        for (const position of positions('command', name)) {
          const res = await t.app.inject({ method: 'POST', url: `/devices/${deviceOf(position)}`, headers: world.headers(json), payload: JSON.stringify(position.body(name)) });
          expect([res.statusCode, res.json().error]).toEqual([400, unknownNameRefusal(position, name)]);
          expect(position.expected).toBe(res.json().error.code);
        }
        expect(await fingerprint(t, world)).toBe(before);
      }),
      { examples: EXAMPLES, numRuns: 8 },
    );
  });

  it('an admin report answers 1102 for a value or an address, and keeps an undeclared resource or property', async () => {
    await fc.assert(
      fc.asyncProperty(outsideName, async (name) => {
        for (const position of positions('report', name)) {
          const deviceId = deviceOf(position);
          const before = await t.ctx.devices.state(deviceId);
          const res = await callAdmin(t.app, 'POST', `/admin/devices/${deviceId}/report`, position.body(name));
          if (position.expected !== 'kept') {
            expect([res.statusCode, res.json().error]).toEqual([400, unknownNameRefusal(position, name)]);
            expect(await t.ctx.devices.state(deviceId)).toEqual(before);
            continue;
          }
          expect(res.statusCode).toBe(200);
          const read = await t.app.inject({ method: 'GET', url: `/devices/${deviceId}`, headers: world.headers() });
          expect(holdsKey(read.json().response, name)).toBe(true);
          if (holdsKey(before.status, name)) continue;
          // New: one more version, and the DEVICE_STATUS event carries it.
          expect(res.json().response.version).toBe(before.version + 1);
          const events = await t.ctx.store.listMessages(world.serviceId, { deviceId, limit: 10_000 });
          expect(events.some((m) => m.pushType === 'DEVICE_STATUS' && holdsKey(JSON.parse(m.body), name))).toBe(true);
        }
      }),
      { examples: EXAMPLES, numRuns: 8 },
    );
  });

  it('an admin push, a sandbox action and a scenario answer 1102 naming what is allowed, and store nothing', async () => {
    await fc.assert(
      fc.asyncProperty(outsideName, async (name) => {
        const before = await fingerprint(t, world);
        for (const { deviceId } of world.devices) {
          const push = await callAdmin(t.app, 'POST', `/admin/devices/${deviceId}/push`, { pushCode: name });
          expect([push.statusCode, push.json().error.code]).toEqual([400, '1102']);
          expect(push.json().error.message).toMatch(new RegExp(`^pushCode must be one of .*; got ${JSON.stringify(name).replaceAll('$', '\\$')}\\.$`));
          const action = await callAdmin(t.app, 'POST', `/admin/devices/${deviceId}/sim`, { action: name });
          expect([action.statusCode, action.json().error.code]).toEqual([400, '1102']);
        }
        const scenario = await callAdmin(t.app, 'POST', `/admin/sim/scenarios/${encodeURIComponent(name)}`, { userNumber: world.userNumber });
        expect([scenario.statusCode, scenario.json().error.code]).toEqual([400, '1102']);
        expect(await fingerprint(t, world)).toBe(before);
      }),
      { examples: EXAMPLES, numRuns: 4 },
    );
  });
});

describe('inherited names over MQTT (DESIGN B, J)', () => {
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
    await subscribeAll(cloud, cloud.world);
  });
  afterAll(() => cloud.close());

  const rejected = async () => (await cloud.metrics.reportsRejected.get()).values.find((v) => v.labels.source === 'mqtt')?.value ?? 0;
  const model = () => getModel(cloud.world.devices[0]!.deviceType)!;

  it('a report is refused and counted for a value, and kept for an undeclared resource or property; a push is refused and counted', async () => {
    await fc.assert(
      fc.asyncProperty(outsideName, async (name) => {
        for (const position of positionsOf(model()).filter((p) => p.side === 'report' && isUnknownTo(p.model, name))) {
          const count = await rejected();
          const before = await cloud.ctx.devices.state(deviceId);
          await client.report(position.body(name));
          if (position.expected === 'kept') {
            await waitFor(async () => expect(holdsKey((await cloud.ctx.devices.state(deviceId)).status, name)).toBe(true));
          } else {
            await waitFor(async () => expect(await rejected()).toBe(count + 1));
            expect(await cloud.ctx.devices.state(deviceId)).toEqual(before);
          }
        }
        const count = await rejected();
        const before = await fingerprint(cloud, cloud.world);
        await client.push(name);
        await waitFor(async () => expect(await rejected()).toBe(count + 1));
        expect(await fingerprint(cloud, cloud.world)).toBe(before);
      }),
      { examples: EXAMPLES, numRuns: 4 },
    );
  });

  it("a command result keeps an undeclared inherited name and refuses one as a value (2208)", async () => {
    const control = () =>
      cloud.app.inject({
        method: 'POST',
        url: `/devices/${deviceId}`,
        headers: cloud.world.headers({ 'content-type': 'application/json' }),
        payload: JSON.stringify({ operation: { dehumidifierOperationMode: 'POWER_ON' } }),
      });
    answer = JSON.parse('{"__proto__": {"a": 1}, "constructor": {"b": 2}, "operation": {"dehumidifierOperationMode": "POWER_ON"}}');
    const kept = await control();
    expect(kept.statusCode).toBe(200);
    expect(Object.keys(kept.json().response)).toEqual(expect.arrayContaining(['__proto__', 'constructor']));

    const enumValue = positionsOf(model()).find((p) => p.side === 'report' && p.level === 'enum value')!;
    answer = enumValue.body('valueOf');
    const before = await cloud.ctx.devices.state(deviceId);
    const refused = await control();
    expect([refused.statusCode, refused.json().error.code]).toEqual([400, '2208']);
    expect(refused.json().error.message).toContain(unknownNameRefusal(enumValue, 'valueOf').message);
    expect(await cloud.ctx.devices.state(deviceId)).toEqual(before);
  });
});
