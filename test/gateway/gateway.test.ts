import { once } from 'node:events';
import { createConnection, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, connectAsync, type IClientOptions } from 'mqtt';
import { generate as generatePacket, parser as mqttPacketParser, type Packet } from 'mqtt-packet';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';
import { DeviceClient } from '../../src/device-protocol/device-client.js';
import { systemClock } from '../../src/ids.js';
import { LOOKUP_TTL_MS } from '../../src/core/cache.js';
import { DeviceNotRegistered } from '../../src/core/errors.js';
import { topicOf } from '../../src/device-protocol/topics.js';
import { encodeCommandResult, encodeConnection } from '../../src/device-protocol/codec.js';
import type { DeviceStatus } from '../../src/catalog/types.js';
import type { PushType } from '../../src/core/model.js';
import { DEVICE_TYPE, mosquittoReachable, startCloud, type BrokerKind, type Cloud, type RealDevice } from './fixture.js';
import { TEST_STREAM } from './settings.js';

const MOSQUITTO_UP = await mosquittoReachable();
if (!MOSQUITTO_UP) console.warn('Mosquitto is not reachable at 127.0.0.1:1883: the external-broker gateway tests are skipped.');

/** Devices speak 3.1.1 or MQTT 5 (which the embedded broker translates at the connection's edge, mqtt5.ts): the whole contract runs in both. */
const BROKERS: { broker: BrokerKind; protocolVersion: 4 | 5; skip: boolean }[] = [
  { broker: 'embedded', protocolVersion: 4, skip: false },
  { broker: 'embedded', protocolVersion: 5, skip: false },
  { broker: 'mosquitto', protocolVersion: 4, skip: !MOSQUITTO_UP },
  { broker: 'mosquitto', protocolVersion: 5, skip: !MOSQUITTO_UP },
];

const waitFor = <T>(check: () => T | Promise<T>) => vi.waitFor(check, { timeout: 5000, interval: 20 });

type Held<R> = { outcome: Promise<R> };

/**
 * Holds the next call to `target[method]` until `release()`: `call` resolves as the call is made, with the outcome it will have
 * once released, so a test can change the world between a message's admission and its write. The calls after it wait for
 * `release()` too, or with `only: 'first'` go through at once.
 */
function holdAt<T extends object, K extends keyof T>(target: T, method: K, only: 'all' | 'first' = 'all') {
  const original = (target[method] as (...args: unknown[]) => Promise<unknown>).bind(target);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let handOver!: (held: Held<unknown>) => void;
  const call = new Promise<Held<unknown>>((resolve) => (handOver = resolve));
  let calls = 0;
  (target[method] as unknown) = (...args: unknown[]) => {
    if (only === 'first' && calls++ > 0) return original(...args);
    const outcome = released.then(() => original(...args));
    handOver({ outcome });
    return outcome;
  };
  return { call, release };
}

/** The cloud's view of a device and the messages it recorded for the world's service. */
function probes(cloud: Cloud) {
  return {
    state: (deviceId: string) => cloud.ctx.devices.state(deviceId),
    async messages(deviceId: string, pushType: PushType) {
      const all = await cloud.ctx.store.listMessages(cloud.world.serviceId, { deviceId });
      return all.filter((m) => m.pushType === pushType).map((m) => JSON.parse(m.body) as { push?: Record<string, unknown>; event?: Record<string, unknown> });
    },
    async rejected() {
      const metric = await cloud.metrics.reportsRejected.get();
      return metric.values.find((v) => v.labels.source === 'mqtt')?.value ?? 0;
    },
    /** Subscriptions straight in the store: what the gateway records depends on them, not on how they were made. */
    async subscribeEvents(deviceId: string) {
      const { serviceId, userNumber } = cloud.world;
      const now = Date.now();
      expect(await cloud.ctx.store.upsertEventSubscription({ serviceId, userNumber, deviceId, expiresAt: now + 3_600_000 }, now, 100)).toBe('created');
    },
    async subscribePush(deviceId: string) {
      expect(await cloud.ctx.store.addPushSubscription(cloud.world.serviceId, cloud.world.userNumber, deviceId, Date.now())).toBe(true);
    },
    /** Unregisters the device and registers its id again: a new registration, which nothing admitted for the old one may touch. */
    async registerAgain(deviceId: string, options: { virtual: boolean } = { virtual: false }) {
      const { devices } = cloud.ctx;
      await devices.unregister(deviceId, cloud.world.userNumber);
      await devices.register(cloud.world.userNumber, { deviceType: DEVICE_TYPE, deviceId, alias: 'Another dehumidifier', virtual: options.virtual });
    },
    call(method: 'GET' | 'POST', url: string, payload?: object) {
      const headers = cloud.world.headers(payload ? { 'content-type': 'application/json' } : {});
      return cloud.app.inject({ method, url, headers, ...(payload ? { payload: JSON.stringify(payload) } : {}) });
    },
  };
}

for (const { broker, protocolVersion, skip } of BROKERS) describe.skipIf(skip)(`MQTT gateway on the ${broker} broker, devices on MQTT ${protocolVersion === 4 ? '3.1.1' : '5'} (DESIGN B)`, () => {
  let cloud: Cloud;
  let p: ReturnType<typeof probes>;
  let device: RealDevice;

  beforeEach(async () => {
    cloud = await startCloud(broker, { controlTimeoutMs: 1500, protocolVersion });
    p = probes(cloud);
    device = await cloud.addDevice();
    expect((await p.call('GET', '/devices')).statusCode).toBe(200);
  });
  afterEach(() => cloud.close());

  it('marks a device online by its connection message and turns reports into status and DEVICE_STATUS', async () => {
    expect((await p.state(device.deviceId)).online).toBe(false);
    await p.subscribeEvents(device.deviceId);
    const client = await cloud.connect(device);
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(true));
    const before = await p.state(device.deviceId);

    await client.report({ humidity: { currentHumidity: 61 } });
    await waitFor(async () => expect((await p.state(device.deviceId)).status).toMatchObject({ humidity: { currentHumidity: 61, targetHumidity: 55 } }));
    expect((await p.state(device.deviceId)).version).toBe(before.version + 1);
    const [message] = await p.messages(device.deviceId, 'DEVICE_STATUS');
    expect(message?.event).toEqual({
      pushType: 'DEVICE_STATUS',
      serviceId: cloud.world.serviceId,
      deviceId: device.deviceId,
      deviceType: 'DEVICE_DEHUMIDIFIER',
      report: { humidity: { currentHumidity: 61 } },
      userList: [cloud.world.userNumber],
    });
    expect(cloud.gateway.connected()).toBe(true);
  });

  it('turns a push code into DEVICE_PUSH for a subscribed service', async () => {
    await p.subscribePush(device.deviceId);
    const client = await cloud.connect(device);
    await client.push('WATER_IS_FULL');
    await waitFor(async () => expect(await p.messages(device.deviceId, 'DEVICE_PUSH')).toHaveLength(1));
    const [message] = await p.messages(device.deviceId, 'DEVICE_PUSH');
    expect(message?.push).toEqual({
      pushType: 'DEVICE_PUSH',
      serviceId: cloud.world.serviceId,
      deviceId: device.deviceId,
      pushCode: 'WATER_IS_FULL',
      deviceType: 'DEVICE_DEHUMIDIFIER',
      userList: [cloud.world.userNumber],
    });
  });

  it('refuses, counts and never stores what does not fit the profile or the contract', async () => {
    await p.subscribeEvents(device.deviceId);
    await p.subscribePush(device.deviceId);
    const client = await cloud.connect(device);
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(true));
    const before = await p.state(device.deviceId);

    // Each is acknowledged: in MQTT 5 by the embedded broker with 0x83 and the problem, which mqtt.js
    // turns into an error; in 3.1.1 plainly, as Mosquitto does before the cloud sees it.
    const tellsWhy = broker === 'embedded' && protocolVersion === 5;
    const reasons: unknown[] = [];
    // The push goes at QoS 2: its refusal comes in the PUBREC.
    client.mqtt.on('packetreceive', (packet) => {
      if ((packet.cmd === 'puback' || packet.cmd === 'pubrec') && packet.reasonCode) reasons.push(packet.properties?.reasonString);
    });
    const refused = (sending: Promise<unknown>) => (tellsWhy ? expect(sending).rejects.toMatchObject({ code: 0x83 }) : sending);
    await refused(client.report({ humidity: { currentHumidity: 'wet' } }));
    await refused(client.report({ humidity: { targetHumidity: 56 } }));
    await refused(client.push('DOOR_IS_OPEN'));
    await refused(client.mqtt.publishAsync(topicOf(device.deviceId, 'state'), '{"humidity":', { qos: 1 }));
    expect(reasons).toEqual(tellsWhy ? [expect.stringMatching(/currentHumidity/), expect.stringMatching(/targetHumidity/), expect.stringMatching(/DOOR_IS_OPEN/), expect.stringMatching(/JSON/)] : []);
    // Per device, messages are handled in order: once this one is stored, the four before it were handled.
    await client.report({ humidity: { currentHumidity: 40 } });
    await waitFor(async () => expect((await p.state(device.deviceId)).status).toMatchObject({ humidity: { currentHumidity: 40 } }));

    expect(await p.rejected()).toBe(4);
    expect((await p.state(device.deviceId)).version).toBe(before.version + 1);
    expect((await p.messages(device.deviceId, 'DEVICE_STATUS')).map((m) => m.event?.report)).toEqual([{ humidity: { currentHumidity: 40 } }]);
    expect(await p.messages(device.deviceId, 'DEVICE_PUSH')).toEqual([]);
  });

  it('sends a command to the device and answers with the status it returns', async () => {
    const received: unknown[] = [];
    await cloud.connect(device, {
      onCommand: (command) => {
        received.push(command);
        return { ok: true, status: command };
      },
    });
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(true));

    const res = await p.call('POST', `/devices/${device.deviceId}`, { airFlow: { windStrengthLevel: 'LOW' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().response).toMatchObject({ airFlow: { windStrengthLevel: 'LOW' }, humidity: { targetHumidity: 55 } });
    expect(received).toEqual([{ airFlow: { windStrengthLevel: 'LOW' } }]);
    expect((await p.state(device.deviceId)).status).toMatchObject({ airFlow: { windStrengthLevel: 'LOW' } });
  });

  it("makes a control's change on the status as stored when another node stored a report while the device answered", async () => {
    // A second node's domain over the same store: its report is written while this node waits for the device.
    const otherNode = createContext(loadConfig('test', {}), cloud.ctx.store, systemClock);
    await p.subscribeEvents(device.deviceId);
    await cloud.connect(device, {
      onCommand: async (command) => {
        await otherNode.devices.report(device.deviceId, { humidity: { currentHumidity: 61 } });
        return { ok: true, status: command };
      },
    });
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(true));

    const res = await p.call('POST', `/devices/${device.deviceId}`, { airFlow: { windStrengthLevel: 'LOW' } });
    expect(res.statusCode).toBe(200);
    const both = { airFlow: { windStrengthLevel: 'LOW' }, humidity: { currentHumidity: 61 } };
    expect(res.json().response).toMatchObject(both);
    expect((await p.state(device.deviceId)).status).toMatchObject(both);
    const newestFirst = await p.messages(device.deviceId, 'DEVICE_STATUS');
    expect(newestFirst.map((m) => m.event?.report).reverse()).toEqual([{ humidity: { currentHumidity: 61 } }, { airFlow: { windStrengthLevel: 'LOW' } }]);
  });

  it('stores what the device answered over a report stored meanwhile, even a value the status had before the command', async () => {
    const otherNode = createContext(loadConfig('test', {}), cloud.ctx.store, systemClock);
    const before = { dehumidifierJobMode: { currentJobMode: 'INTENSIVE_DRY' } };
    const pressed = { dehumidifierJobMode: { currentJobMode: 'QUIET_HUMIDITY' } };
    await cloud.ctx.devices.report(device.deviceId, before);
    await p.subscribeEvents(device.deviceId);
    await cloud.connect(device, {
      onCommand: async (command) => {
        await otherNode.devices.report(device.deviceId, pressed);
        return { ok: true, status: command };
      },
    });
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(true));

    const res = await p.call('POST', `/devices/${device.deviceId}`, before);
    expect(res.statusCode).toBe(200);
    expect(res.json().response).toMatchObject(before);
    expect((await p.state(device.deviceId)).status).toMatchObject(before);
    const newestFirst = await p.messages(device.deviceId, 'DEVICE_STATUS');
    expect(newestFirst.map((m) => m.event?.report).reverse()).toEqual([pressed, before]);
  });

  // A button pressed on the device just before the command came, or just after it answered: the device reports it then.
  const pressed = { dehumidifierJobMode: { currentJobMode: 'QUIET_HUMIDITY' } };
  const commanded = { dehumidifierJobMode: { currentJobMode: 'INTENSIVE_DRY' } };
  for (const when of ['before', 'after'] as const) {
    // Through Mosquitto, results come on each node's own connection and reports on the device stream: their order is not kept (an open question).
    it.skipIf(broker === 'mosquitto')(`stores a report the device sent right ${when} its command result in that order with the control's change`, async () => {
      await p.subscribeEvents(device.deviceId);
      const client = await connectAsync(cloud.url, { clientId: device.deviceId, username: device.deviceId, password: device.secret, protocolVersion, reconnectPeriod: 0 });
      await client.subscribeAsync(topicOf(device.deviceId, 'command'), { qos: 1 });
      // Each acknowledged before the client ends: one still in flight then would be rejected, unheard.
      const sent: Promise<unknown>[] = [];
      client.on('message', (_topic, payload) => {
        const { commandId, command } = JSON.parse(payload.toString()) as { commandId: string; command: DeviceStatus };
        const report = () => sent.push(client.publishAsync(topicOf(device.deviceId, 'state'), JSON.stringify(pressed), { qos: 1 }));
        // Both in one turn: the broker reads them together.
        if (when === 'before') report();
        sent.push(client.publishAsync(topicOf(device.deviceId, 'command/result'), encodeCommandResult({ commandId, ok: true, status: command }), { qos: 1 }));
        if (when === 'after') report();
      });
      await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(true));

      const res = await p.call('POST', `/devices/${device.deviceId}`, commanded);
      expect(res.statusCode).toBe(200);
      const inOrder = when === 'before' ? [pressed, commanded] : [commanded, pressed];
      const reports = async () => (await p.messages(device.deviceId, 'DEVICE_STATUS')).map((m) => m.event?.report).reverse();
      await waitFor(async () => expect(await reports()).toEqual(inOrder));
      expect((await p.state(device.deviceId)).status).toMatchObject(inOrder[1]!);
      await Promise.all(sent);
      await client.endAsync(true);
    });
  }

  it("answers with the device's refusal code, or 2208 when it gives none", async () => {
    let refusal: { ok: false; code?: string; message?: string } = { ok: false, code: '2302', message: 'The dehumidifier is defrosting.' };
    await cloud.connect(device, { onCommand: () => refusal });
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(true));

    const res = await p.call('POST', `/devices/${device.deviceId}`, { airFlow: { windStrengthLevel: 'LOW' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toEqual({ code: '2302', message: 'The dehumidifier is defrosting.' });

    refusal = { ok: false };
    const bare = await p.call('POST', `/devices/${device.deviceId}`, { airFlow: { windStrengthLevel: 'LOW' } });
    expect(bare.json().error).toEqual({ code: '2208', message: `Device ${device.deviceId} refused the command: no reason given.` });
    expect((await p.state(device.deviceId)).status).toMatchObject({ airFlow: { windStrengthLevel: 'HIGH' } });
  });

  it('answers 2208 at once, not 2209 at the timeout, when the device answers the command with a result that does not fit the contract', async () => {
    const client = await cloud.connect(device, { onCommand: () => new Promise(() => undefined) });
    client.mqtt.on('message', (topic, payload) => {
      if (!topic.endsWith('/command')) return;
      const { commandId } = JSON.parse(payload.toString()) as { commandId: string };
      void client.mqtt.publishAsync(`appliance/${device.deviceId}/command/result`, JSON.stringify({ commandId, ok: 'yes' }), { qos: 1 });
    });
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(true));
    const res = await p.call('POST', `/devices/${device.deviceId}`, { airFlow: { windStrengthLevel: 'LOW' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toEqual({
      code: '2208',
      message: `Device ${device.deviceId} answered the command with a result that does not fit the device contract: ok must be true or false; got "yes".`,
    });
  });

  it('answers 2209 when the device does not answer within the control timeout', async () => {
    await cloud.connect(device, { onCommand: () => new Promise(() => undefined) });
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(true));
    const res = await p.call('POST', `/devices/${device.deviceId}`, { airFlow: { windStrengthLevel: 'LOW' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toEqual({ code: '2209', message: `Device ${device.deviceId} did not answer the command: it did not answer within 1500 ms.` });
  });

  it('answers 1222 at once, not 2209 at the timeout, when the device goes offline before it answers the command', async () => {
    const client = await cloud.connect(device, { reconnectPeriod: 0, onCommand: () => new Promise(() => undefined) });
    client.mqtt.on('message', (topic) => {
      if (topic.endsWith('/command')) client.mqtt.stream.destroy();
    });
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(true));
    const res = await p.call('POST', `/devices/${device.deviceId}`, { airFlow: { windStrengthLevel: 'LOW' } });
    expect(res.statusCode).toBe(416);
    expect(res.json().error).toEqual({ code: '1222', message: `Device ${device.deviceId} went offline before it answered the command.` });
  });

  it('never hands a device a command whose control already failed: one sent while its kept session had no connection is not queued for it', async () => {
    const session = {
      clientId: device.deviceId,
      username: device.deviceId,
      password: device.secret,
      protocolVersion,
      clean: false,
      reconnectPeriod: 0,
      ...(protocolVersion === 5 ? { properties: { sessionExpiryInterval: 300 } } : {}),
    };
    const first = await connectAsync(cloud.url, session);
    await first.subscribeAsync(topicOf(device.deviceId, 'command'), { qos: 1 });
    await first.endAsync();

    // The control's command goes out while the device is away, and fails at its timeout.
    const registered = (await cloud.ctx.store.getDevice(device.deviceId))!;
    const outcome = await cloud.gateway.channel.sendCommand(registered, (await p.state(device.deviceId)).status, { airFlow: { windStrengthLevel: 'LOW' } }, 300);
    expect(outcome).toMatchObject({ ok: false, code: '2209' });

    const commands: string[] = [];
    // Listening before it connects: what a kept session holds comes right after CONNACK.
    const back = connect(cloud.url, session);
    back.on('message', (topic, payload) => commands.push(`${topic} ${payload.toString()}`));
    await new Promise((resolve) => back.once('connect', resolve));
    // It comes before the PUBACK of anything sent after CONNACK.
    await back.publishAsync(topicOf(device.deviceId, 'state'), JSON.stringify({ humidity: { currentHumidity: 50 } }), { qos: 1 });
    expect(commands).toEqual([]);
    await back.endAsync();
  });

  it('marks a device offline by its will after an abrupt disconnect', async () => {
    const client = await cloud.connect(device, { reconnectPeriod: 0 });
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(true));
    client.mqtt.stream.destroy();
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(false));
    const res = await p.call('POST', `/devices/${device.deviceId}`, { airFlow: { windStrengthLevel: 'LOW' } });
    expect(res.json().error.code).toBe('1222');
  });

  it('marks a device offline when it says so before a clean disconnect', async () => {
    const client = await cloud.connect(device);
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(true));
    await client.close();
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(false));
  });

  it('goes on after a command result that the catalog threw on, and still takes reports (DESIGN J)', async () => {
    // `hasOwnProperty` names a resource of no profile; the catalog read it through Object.prototype and threw.
    const client = await cloud.connect(device, { onCommand: () => ({ ok: true, status: { hasOwnProperty: { on: true } } }) });
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(true));
    const res = await p.call('POST', `/devices/${device.deviceId}`, { airFlow: { windStrengthLevel: 'LOW' } });
    expect(res.json()).toMatchObject({ messageId: expect.any(String), timestamp: expect.any(String) });

    expect(cloud.gateway.connected()).toBe(true);
    await client.report({ humidity: { currentHumidity: 44 } });
    await waitFor(async () => expect((await p.state(device.deviceId)).status).toMatchObject({ humidity: { currentHumidity: 44 } }));
  });
});

describe.skipIf(!MOSQUITTO_UP)('MQTT gateway with several nodes on one external broker', () => {
  let cloud: Cloud;
  let p: ReturnType<typeof probes>;
  let device: RealDevice;

  beforeEach(async () => {
    cloud = await startCloud('mosquitto', { controlTimeoutMs: 1500 });
    p = probes(cloud);
    device = await cloud.addDevice();
    expect((await p.call('GET', '/devices')).statusCode).toBe(200);
  });
  afterEach(() => cloud.close());

  it('processes each push once and brings a command result to the node that waits for it', async () => {
    await cloud.addNode();
    await p.subscribePush(device.deviceId);
    const client = await cloud.connect(device, { onCommand: (command) => ({ ok: true, status: command }) });
    for (let i = 0; i < 6; i++) await client.push('WATER_IS_FULL');
    await waitFor(async () => expect(await p.messages(device.deviceId, 'DEVICE_PUSH')).toHaveLength(6));

    // Commands go out through the first node; the second sees every result and ignores it.
    for (const level of ['LOW', 'HIGH', 'LOW']) {
      const res = await p.call('POST', `/devices/${device.deviceId}`, { airFlow: { windStrengthLevel: level } });
      expect(res.json().response).toMatchObject({ airFlow: { windStrengthLevel: level } });
    }
    expect(await p.messages(device.deviceId, 'DEVICE_PUSH')).toHaveLength(6);
  });

  it('learns from the retained connection message that a device is online when a node takes the device stream over', async () => {
    await cloud.connect(device);
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(true));
    const second = await cloud.addNode();
    // A stale flag, as after a restart; the node that takes over subscribes, and gets the retained `online: true`.
    await cloud.ctx.store.setOnline(device.deviceId, false);
    await cloud.gateway.close();
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(true));
    expect(second.connected()).toBe(true);
  });

  it('never stores a report it took before another node took the device stream over: the newer reports that node stored stay', async () => {
    const second = await cloud.addNode();
    await p.subscribeEvents(device.deviceId);
    const client = await cloud.connect(device);
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(true));
    const { store } = cloud.ctx;
    // The first node's renewals of the lease are refused from `lost` on, as when it loses the database.
    const holdLease = store.holdLease.bind(store);
    let holder: string | undefined;
    let lost: string | undefined;
    store.holdLease = async (name, node, ttlMs) => {
      if (node === lost) return false;
      const holds = await holdLease(name, node, ttlMs);
      if (holds) holder = node;
      return holds;
    };
    await waitFor(() => expect(holder).toBeDefined());

    // The first node takes a report and reads the status; its write waits, as on a slow database...
    const write = holdAt(store, 'applyReports', 'first');
    void client.report({ humidity: { currentHumidity: 31 } });
    const held = await write.call;
    try {
      // ...while it loses the lease, and once that ran out the second node takes the stream over and stores that report and a newer one.
      lost = holder;
      await waitFor(() => expect(second.holdsDeviceStream()).toBe(true));
      await waitFor(async () => expect((await p.state(device.deviceId)).status).toMatchObject({ humidity: { currentHumidity: 31 } }));
      await client.report({ humidity: { currentHumidity: 32 } });
      await waitFor(async () => expect((await p.state(device.deviceId)).status).toMatchObject({ humidity: { currentHumidity: 32 } }));
    } finally {
      // The first node's write finds the status moved on; it no longer consumes the stream, so it does not work its report out again.
      write.release();
    }
    await expect(held.outcome).rejects.toThrow(/changed while a change was being stored/);
    await sleep(300);
    expect((await p.state(device.deviceId)).status).toMatchObject({ humidity: { currentHumidity: 32 } });
    const newestFirst = (await p.messages(device.deviceId, 'DEVICE_STATUS')).map((m) => (m.event?.report as { humidity: { currentHumidity: number } }).humidity.currentHumidity);
    expect(newestFirst.reverse()).toEqual([31, 32]);
  });

  it('stops counting itself the holder of the device stream two thirds into its lease by the clock, even while too busy to run its timers', async () => {
    expect(cloud.gateway.holdsDeviceStream()).toBe(true);
    // Nothing renews the lease meanwhile, and the timer that would end the holding cannot run.
    const busyUntil = performance.now() + TEST_STREAM.leaseMs;
    while (performance.now() < busyUntil);
    expect(cloud.gateway.holdsDeviceStream()).toBe(false);
  });

  it("stores a device's reports in the order sent across a hand-over from one node to the next", async () => {
    await cloud.addNode();
    await p.subscribeEvents(device.deviceId);
    const client = await cloud.connect(device);
    const levels = Array.from({ length: 40 }, (_, n) => 20 + n);
    const sending = (async () => {
      for (const level of levels) await client.report({ humidity: { currentHumidity: level } });
    })();
    await sleep(20);
    await cloud.gateway.close();
    await sending;
    await waitFor(async () => expect((await p.state(device.deviceId)).status).toMatchObject({ humidity: { currentHumidity: levels.at(-1) } }));
    const newestFirst = (await p.messages(device.deviceId, 'DEVICE_STATUS')).map((m) => (m.event?.report as { humidity: { currentHumidity: number } }).humidity.currentHumidity);
    expect(newestFirst.reverse()).toEqual(levels);
  }, 20_000);
});

describe.skipIf(!MOSQUITTO_UP)('the reference device client on the wire (DESIGN B)', () => {
  it('sends pushes at QoS 2, which a broker takes once however often a lost acknowledgement makes it send them', async () => {
    const cloud = await startCloud('mosquitto');
    try {
      const device = await cloud.addDevice();
      // The machine's Mosquitto lets a stranger watch: it gets the push at the QoS it was sent with.
      const watcher = await connectAsync(cloud.url, { clientId: `watcher-${device.deviceId}`, reconnectPeriod: 0 });
      await watcher.subscribeAsync(topicOf(device.deviceId, 'push'), { qos: 2 });
      const seen = new Promise<number>((resolve) => watcher.once('message', (_topic, _payload, packet) => resolve(packet.qos)));
      const client = await cloud.connect(device);
      await client.push('WATER_IS_FULL');
      expect(await seen).toBe(2);
      await watcher.endAsync();
    } finally {
      await cloud.close();
    }
  });
});

describe('embedded broker access rules (DESIGN B)', () => {
  let cloud: Cloud;
  let p: ReturnType<typeof probes>;

  beforeEach(async () => {
    cloud = await startCloud('embedded');
    p = probes(cloud);
  });
  afterEach(() => cloud.close());

  it('refuses a wrong secret, an unknown device and a client id that is not the device id', async () => {
    const device = await cloud.addDevice();
    const connect = (deviceId: string, secret: string) => DeviceClient.connect({ url: cloud.url, deviceId, secret, reconnectPeriod: 0 });
    await expect(connect(device.deviceId, 'not-the-secret')).rejects.toThrow(/bad user ?name or password/i);
    await expect(connect('no-such-device', device.secret)).rejects.toThrow(/bad user ?name or password/i);
    const borrowed = connectAsync(cloud.url, { clientId: 'someone-else', username: device.deviceId, password: device.secret, reconnectPeriod: 0 }, false);
    await expect(borrowed).rejects.toThrow(/not authorized/i);
    expect((await p.state(device.deviceId)).online).toBe(false);
  });

  it('counts a device online from its connection, before or without its connection message (DESIGN D), and offline when it ends', async () => {
    const device = await cloud.addDevice();
    const silent = await connectAsync(cloud.url, { clientId: device.deviceId, username: device.deviceId, password: device.secret, reconnectPeriod: 0 });
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(true));
    await silent.endAsync();
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(false));
  });

  it("refuses to let a device publish to or subscribe under another device's topics", async () => {
    const [intruder, victim] = [await cloud.addDevice(), await cloud.addDevice()];
    const victimClient = await cloud.connect(victim);
    const intruderClient = await cloud.connect(intruder, { reconnectPeriod: 0 });
    await waitFor(async () => expect((await p.state(intruder.deviceId)).online).toBe(true));
    const victimBefore = await p.state(victim.deviceId);

    // Under its own prefix, a wildcard is granted (DESIGN B); under another's, refused in the SUBACK
    // (0x80), which mqtt.js turns into an error.
    const granted = await intruderClient.mqtt.subscribeAsync(`appliance/${intruder.deviceId}/#`, { qos: 1 });
    expect(granted.map((g) => g.qos)).toEqual([1]);
    await expect(intruderClient.mqtt.subscribeAsync(topicOf(victim.deviceId, 'command'), { qos: 1 })).rejects.toThrow(/Subscribe error/);

    // MQTT 3.1.1 has no negative PUBACK: the broker drops the connection, and the will says offline.
    const closed = new Promise<void>((resolve) => intruderClient.mqtt.once('close', () => resolve()));
    intruderClient.mqtt.publish(topicOf(victim.deviceId, 'state'), JSON.stringify({ humidity: { currentHumidity: 99 } }), { qos: 1 });
    await closed;
    await waitFor(async () => expect((await p.state(intruder.deviceId)).online).toBe(false));

    // The victim's own report after it still lands, and is the only change.
    await victimClient.report({ humidity: { currentHumidity: 45 } });
    await waitFor(async () => expect((await p.state(victim.deviceId)).status).toMatchObject({ humidity: { currentHumidity: 45 } }));
    expect((await p.state(victim.deviceId)).version).toBe(victimBefore.version + 1);
  });

  it('cuts off a device unregistered while connected at once, and it cannot connect again', async () => {
    const device = await cloud.addDevice();
    const client = await cloud.connect(device, { reconnectPeriod: 0 });
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(true));
    const closed = new Promise<void>((resolve) => client.mqtt.once('close', () => resolve()));
    await cloud.ctx.devices.unregister(device.deviceId, cloud.world.userNumber);
    await closed;
    await expect(DeviceClient.connect({ url: cloud.url, deviceId: device.deviceId, secret: device.secret, reconnectPeriod: 0 })).rejects.toThrow(/bad user ?name or password/i);
  });

  it('leaves a device registered again under the id of one cut off as it was: the old connection does not mark it offline', async () => {
    const device = await cloud.addDevice();
    const client = await cloud.connect(device, { reconnectPeriod: 0 });
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(true));
    const closed = new Promise<void>((resolve) => client.mqtt.once('close', () => resolve()));
    await cloud.ctx.devices.unregister(device.deviceId, cloud.world.userNumber);
    // A virtual appliance is online from its registration (DESIGN D).
    await cloud.ctx.devices.register(cloud.world.userNumber, { deviceType: DEVICE_TYPE, deviceId: device.deviceId, alias: 'Another dehumidifier', virtual: true });
    await closed;
    // What the old connection's end would have set goes through the bridge after the cut.
    await sleep(300);
    expect((await p.state(device.deviceId)).online).toBe(true);
  });

  it('drops a report admitted before its device was unregistered and registered again: none lands on the new registration', async () => {
    const device = await cloud.addDevice();
    const client = await cloud.connect(device, { reconnectPeriod: 0 });
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(true));
    // The report, admitted for the first registration, waits at Devices while the id is registered again.
    const held = holdAt(cloud.ctx.devices, 'reports');
    void client.report({ humidity: { currentHumidity: 99 } }).catch(() => undefined);
    const { outcome } = await held.call;
    await p.registerAgain(device.deviceId);
    const registered = await p.state(device.deviceId);
    held.release();

    await expect(outcome).rejects.toBeInstanceOf(DeviceNotRegistered);
    expect(await p.state(device.deviceId)).toEqual(registered);
  });

  it('drops a push admitted before its device was unregistered and registered again: none is recorded for the new registration', async () => {
    const device = await cloud.addDevice();
    const client = await cloud.connect(device, { reconnectPeriod: 0 });
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(true));
    // The push, admitted for the first registration, waits at Devices while the id is registered again.
    const held = holdAt(cloud.ctx.devices, 'push');
    void client.push('WATER_IS_FULL').catch(() => undefined);
    const { outcome } = await held.call;
    await p.registerAgain(device.deviceId);
    await p.subscribePush(device.deviceId);
    held.release();

    await expect(outcome).rejects.toBeInstanceOf(DeviceNotRegistered);
    expect(await p.messages(device.deviceId, 'DEVICE_PUSH')).toEqual([]);
  });

  it('drops a connection flag admitted before its device was unregistered and registered again: the new registration stays offline', async () => {
    const device = await cloud.addDevice();
    const client = await cloud.connect(device, { reconnectPeriod: 0 });
    // The flag, admitted for the first registration, waits at Devices while the id is registered again.
    const held = holdAt(cloud.ctx.devices, 'setConnection');
    void client.mqtt.publishAsync(topicOf(device.deviceId, 'connection'), encodeConnection({ online: true }), { qos: 1 }).catch(() => undefined);
    const { outcome } = await held.call;
    await p.registerAgain(device.deviceId);
    held.release();

    await expect(outcome).rejects.toBeInstanceOf(DeviceNotRegistered);
    expect((await p.state(device.deviceId)).online).toBe(false);
  });

  it('marks offline, when a connection ends, only the registration it was admitted for: not one registered under its id since', async () => {
    const device = await cloud.addDevice();
    const client = await cloud.connect(device, { reconnectPeriod: 0 });
    // The broker's offline flag, taken as the connection ends, waits at Devices while the id is registered again.
    const held = holdAt(cloud.ctx.devices, 'setConnection');
    // Ended without its will: the broker's own flag is the only one.
    await client.mqtt.endAsync();
    const { outcome } = await held.call;
    // A virtual appliance is online from its registration on.
    await p.registerAgain(device.deviceId, { virtual: true });
    held.release();

    await expect(outcome).rejects.toBeInstanceOf(DeviceNotRegistered);
    expect((await p.state(device.deviceId)).online).toBe(true);
  });

  it('marks online, when a device connects, only the registration it was admitted for: not one registered under its id since', async () => {
    const device = await cloud.addDevice();
    // The broker's online flag, taken as the device connects, waits at Devices while the id is registered again.
    const held = holdAt(cloud.ctx.devices, 'setConnection');
    // Its own online message waits behind the broker's flag, and the connection is cut off with it.
    void cloud.connect(device, { reconnectPeriod: 0 }).catch(() => undefined);
    const { outcome } = await held.call;
    await p.registerAgain(device.deviceId);
    held.release();

    await expect(outcome).rejects.toBeInstanceOf(DeviceNotRegistered);
    expect((await p.state(device.deviceId)).online).toBe(false);
  });

  it('marks offline, as it shuts down, only the registrations its devices connected as: not one registered under their id since', async () => {
    const device = await cloud.addDevice();
    await cloud.connect(device, { reconnectPeriod: 0 });
    expect((await p.state(device.deviceId)).online).toBe(true);
    // The shutdown's offline flag for the connected device waits at Devices while the id is registered again.
    const held = holdAt(cloud.ctx.devices, 'setConnection');
    const closing = cloud.gateway.close();
    const { outcome } = await held.call;
    // A virtual appliance is online from its registration on.
    await p.registerAgain(device.deviceId, { virtual: true });
    held.release();
    await closing;

    await expect(outcome).rejects.toBeInstanceOf(DeviceNotRegistered);
    expect((await p.state(device.deviceId)).online).toBe(true);
  });

  it('cuts off the devices of a deleted user at once, and keeps those another user still has', async () => {
    const [gone, shared] = [await cloud.addDevice(), await cloud.addDevice()];
    const other = await cloud.ctx.accounts.createUser(cloud.world.countryCode);
    await cloud.ctx.devices.share(shared.deviceId, other.userNumber);
    const goneClient = await cloud.connect(gone, { reconnectPeriod: 0 });
    const sharedClient = await cloud.connect(shared, { reconnectPeriod: 0 });
    await waitFor(async () => expect((await p.state(shared.deviceId)).online).toBe(true));
    const closed = new Promise<void>((resolve) => goneClient.mqtt.once('close', () => resolve()));
    await cloud.ctx.accounts.deleteUser(cloud.world.userNumber);
    await closed;
    await sharedClient.report({ humidity: { currentHumidity: 45 } });
    expect(sharedClient.mqtt.connected).toBe(true);
    expect((await p.state(shared.deviceId)).status).toMatchObject({ humidity: { currentHumidity: 45 } });
  });

  it('never sends a command to a connection of a device unregistered by another process since: it is cut off first', async () => {
    const device = await cloud.addDevice();
    const client = await cloud.connect(device, { reconnectPeriod: 0 });
    const commands: string[] = [];
    client.mqtt.on('message', (topic) => commands.push(topic));
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(true));
    const registered = await cloud.ctx.store.getDevice(device.deviceId);
    const closed = new Promise<void>((resolve) => client.mqtt.once('close', () => resolve()));
    // Straight in the store, as the admin CLI on the same SQLite file does: this process reads it again after the lookup TTL.
    expect(await cloud.ctx.store.unregisterDevice(device.deviceId, cloud.world.userNumber, Date.now())).toBe(true);
    await sleep(LOOKUP_TTL_MS + 100);
    const outcome = await cloud.gateway.channel.sendCommand(registered!, {}, { airFlow: { windStrengthLevel: 'LOW' } }, 300);
    await closed;
    // Cut off by the command's check (offline, it fails with 1222), or on PostgreSQL sometimes before it
    // by a check that its connection's notices started and that read the store after the unregistration.
    expect(outcome).toMatchObject({ ok: false });
    expect(commands).toEqual([]);
  });

  it("acknowledges a report only once it is stored with its event, and stores a device's reports in the order sent", async () => {
    const device = await cloud.addDevice();
    await p.subscribeEvents(device.deviceId);
    const client = await cloud.connect(device);
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(true));
    const before = await p.state(device.deviceId);
    // Its lookup expired: each publish's check reads the store again, and those reads end in any order.
    await sleep(LOOKUP_TTL_MS + 100);

    // All in flight at once: each PUBACK comes after the commit that stored its report.
    const humidities = [41, 42, 43, 44, 45, 46, 47, 48];
    await Promise.all(humidities.map((currentHumidity) => client.report({ humidity: { currentHumidity } })));
    const after = await p.state(device.deviceId);
    expect(after.version).toBe(before.version + humidities.length);
    expect(after.status).toMatchObject({ humidity: { currentHumidity: 48 } });
    const events = await p.messages(device.deviceId, 'DEVICE_STATUS');
    // Newest first.
    expect(events.map((m) => (m.event?.report as { humidity: { currentHumidity: number } }).humidity.currentHumidity)).toEqual([...humidities].reverse());
  });

  it('refuses a report among others in flight with it alone, and records a push between reports in its place', async () => {
    const device = await cloud.addDevice();
    await p.subscribeEvents(device.deviceId);
    await p.subscribePush(device.deviceId);
    const client = await cloud.connect(device);
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(true));
    const before = await p.state(device.deviceId);

    const report = (currentHumidity: unknown) => client.report({ humidity: { currentHumidity } } as DeviceStatus);
    await Promise.all([
      report(41),
      report('wet'),
      report(42),
      client.push('WATER_IS_FULL'),
      report(43),
      client.mqtt.publishAsync(topicOf(device.deviceId, 'state'), '{"humidity":', { qos: 1 }),
      report(44),
    ]);

    expect(await p.rejected()).toBe(2);
    expect((await p.state(device.deviceId)).version).toBe(before.version + 4);
    const recorded = await cloud.ctx.store.listMessages(cloud.world.serviceId, { deviceId: device.deviceId });
    const told = recorded
      .filter((m) => m.pushType !== 'DEVICE_REGISTERED')
      .reverse()
      .map((m) => {
        const body = JSON.parse(m.body) as { push?: { pushCode: string }; event?: { report: { humidity: { currentHumidity: number } } } };
        return body.push?.pushCode ?? body.event?.report.humidity.currentHumidity;
      });
    expect(told).toEqual([41, 42, 'WATER_IS_FULL', 43, 44]);
  });

  it('marks the devices it served offline when it closes', async () => {
    const device = await cloud.addDevice();
    await cloud.connect(device, { reconnectPeriod: 0 });
    await waitFor(async () => expect((await p.state(device.deviceId)).online).toBe(true));
    await cloud.gateway.close();
    expect((await p.state(device.deviceId)).online).toBe(false);
  });
});

/** An MQTT 3.1.1 string: its length in two bytes, then its UTF-8. */
function mqttString(text: string): Buffer {
  const bytes = Buffer.from(text);
  return Buffer.concat([Buffer.from([bytes.length >> 8, bytes.length & 0xff]), bytes]);
}

/** A packet: its type byte, its remaining length (under 128 here), then its body. */
function mqttPacket(type: number, ...body: Buffer[]): Buffer {
  const rest = Buffer.concat(body);
  return Buffer.concat([Buffer.from([type, rest.length]), rest]);
}

/**
 * A device on a bare socket: CONNECT with a keep-alive of one second, user name and password and no
 * will, then `{"online": true}` retained at QoS 0, then silence — no PINGREQ, ever.
 */
async function silentDevice(port: number, device: RealDevice): Promise<Socket> {
  const socket = createConnection(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  const connect = mqttPacket(0x10, mqttString('MQTT'), Buffer.from([4, 0xc2, 0, 1]), mqttString(device.deviceId), mqttString(device.deviceId), mqttString(device.secret));
  socket.write(connect);
  await once(socket, 'data');
  socket.write(mqttPacket(0x31, mqttString(topicOf(device.deviceId, 'connection')), Buffer.from('{"online":true}')));
  return socket;
}

describe("embedded broker: a device's connection and its online flag (DESIGN B; issue 12a)", () => {
  let cloud: Cloud;
  let p: ReturnType<typeof probes>;
  let device: RealDevice;
  const online = async () => (await p.state(device.deviceId)).online;

  beforeEach(async () => {
    cloud = await startCloud('embedded');
    p = probes(cloud);
    device = await cloud.addDevice();
  });
  afterEach(() => cloud.close());

  /** A connection of the device's own, without the will DeviceClient leaves. */
  const bare = (extra: Partial<IClientOptions> = {}) =>
    connectAsync(cloud.url, { clientId: device.deviceId, username: device.deviceId, password: device.secret, reconnectPeriod: 0, ...extra });

  it('marks offline as it starts the real devices a killed run left online, for none is connected to it yet; virtual ones stay as they were', async () => {
    // What a run killed with the device connected leaves: the flag, and no connection.
    await cloud.ctx.devices.setConnection(device.deviceId, true);
    const { device: virtual } = await cloud.ctx.devices.register(cloud.world.userNumber, { deviceType: 'DEVICE_CEILING_FAN', alias: 'Fan', virtual: true });
    await cloud.gateway.close();
    expect(await online()).toBe(true);

    const restarted = await cloud.addNode();
    expect(await online()).toBe(false);
    expect((await p.state(virtual.deviceId)).online).toBe(true);
    const client = await connectAsync(`mqtt://127.0.0.1:${restarted.port}`, { clientId: device.deviceId, username: device.deviceId, password: device.secret, reconnectPeriod: 0 });
    await waitFor(async () => expect(await online()).toBe(true));
    await client.endAsync();
  });

  it('marks a device offline when its socket is destroyed and it left no will', async () => {
    const client = await bare();
    await client.publishAsync(topicOf(device.deviceId, 'connection'), JSON.stringify({ online: true }), { qos: 1, retain: true });
    expect(await online()).toBe(true);
    client.stream.destroy();
    await waitFor(async () => expect(await online()).toBe(false));
  });

  it('marks a device offline when its will is not one the contract knows', async () => {
    const client = await bare({ will: { topic: topicOf(device.deviceId, 'connection'), payload: Buffer.from('gone'), qos: 1, retain: false } });
    await client.publishAsync(topicOf(device.deviceId, 'connection'), JSON.stringify({ online: true }), { qos: 1, retain: true });
    client.stream.destroy();
    await waitFor(async () => expect(await online()).toBe(false));
  });

  it('marks a device offline when the broker drops it for missing its keep-alive', async () => {
    const socket = await silentDevice(cloud.gateway.port!, device);
    await waitFor(async () => expect(await online()).toBe(true));
    // The broker waits one and a half keep-alives, then closes the connection.
    await vi.waitFor(async () => expect(await online()).toBe(false), { timeout: 4000, interval: 50 });
    expect(socket.destroyed || socket.readableEnded).toBe(true);
    socket.destroy();
  });

  it('leaves a device online after a clean disconnect and reconnection', async () => {
    const client = await cloud.connect(device);
    await waitFor(async () => expect(await online()).toBe(true));
    await client.mqtt.endAsync();
    client.mqtt.reconnect();
    await waitFor(async () => expect(client.mqtt.connected).toBe(true));
    await waitFor(async () => expect(await online()).toBe(true));
    await sleep(300);
    expect(await online()).toBe(true);
  });

  it('leaves a device online when a new session of it takes over the old one, which no longer speaks for it', async () => {
    const first = await cloud.connect(device, { reconnectPeriod: 0 });
    await waitFor(async () => expect(await online()).toBe(true));
    const firstClosed = new Promise<void>((resolve) => first.mqtt.once('close', () => resolve()));
    // The second session announces nothing: only the first one's close could change the flag.
    const second = await bare();
    await firstClosed;
    await sleep(300);
    expect(await online()).toBe(true);

    // The latest session ending does take it offline.
    second.stream.destroy();
    await waitFor(async () => expect(await online()).toBe(false));
  });
});

/** A device on a bare socket speaking packets built by mqtt-packet, for flows mqtt.js will not play (a QoS 2 publish sent again). */
async function packetDevice(port: number, device: RealDevice, protocolVersion: 4 | 5) {
  const socket = createConnection(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  const parser = mqttPacketParser({ protocolVersion });
  const received: Packet[] = [];
  parser.on('packet', (packet: Packet) => received.push(packet));
  socket.on('data', (chunk) => parser.parse(chunk));
  const send = (packet: Record<string, unknown>) => socket.write(generatePacket(packet as unknown as Packet, { protocolVersion }));
  const next = (cmd: string) => vi.waitFor(() => {
    const index = received.findIndex((packet) => packet.cmd === cmd);
    if (index < 0) throw new Error(`no ${cmd} yet`);
    return received.splice(index, 1)[0]!;
  }, { timeout: 5000, interval: 10 });
  send({ cmd: 'connect', protocolId: 'MQTT', protocolVersion, clean: false, keepalive: 30, clientId: device.deviceId, username: device.deviceId, password: Buffer.from(device.secret), ...(protocolVersion === 5 ? { properties: { sessionExpiryInterval: 600 } } : {}) });
  expect(await next('connack')).toMatchObject(protocolVersion === 5 ? { reasonCode: 0 } : { returnCode: 0 });
  return { socket, send, next };
}

describe('embedded broker: QoS 2 (DESIGN B, J)', () => {
  let cloud: Cloud;
  let p: ReturnType<typeof probes>;

  beforeEach(async () => {
    cloud = await startCloud('embedded');
    p = probes(cloud);
  });
  afterEach(() => cloud.close());

  for (const protocolVersion of [4, 5] as const) {
    it(`records a QoS 2 push once when the device sends it again after a lost PUBREC (MQTT ${protocolVersion === 4 ? '3.1.1' : '5'})`, async () => {
      const device = await cloud.addDevice();
      await p.subscribePush(device.deviceId);
      const push = { cmd: 'publish', topic: topicOf(device.deviceId, 'push'), payload: Buffer.from('{"pushCode":"WATER_IS_FULL"}'), qos: 2, messageId: 7, retain: false };
      const first = await packetDevice(cloud.gateway.port!, device, protocolVersion);
      first.send({ ...push, dup: false });
      await first.next('pubrec');
      // The PUBREC never reached the device: it connects again to its session and sends the publish again, as MQTT asks.
      first.socket.destroy();
      const again = await packetDevice(cloud.gateway.port!, device, protocolVersion);
      again.send({ ...push, dup: true });
      await again.next('pubrec');
      again.send({ cmd: 'pubrel', messageId: 7 });
      await again.next('pubcomp');
      again.socket.destroy();
      expect((await p.messages(device.deviceId, 'DEVICE_PUSH')).map((m) => m.push?.pushCode)).toEqual(['WATER_IS_FULL']);
    });
  }
});
