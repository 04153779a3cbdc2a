import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Aedes } from 'aedes';
import fc from 'fast-check';
import { connect, connectAsync, type IConnackPacket, type IDisconnectPacket } from 'mqtt';
import mqttPacket, { type Packet } from 'mqtt-packet';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LOOKUP_TTL_MS } from '../../src/core/cache.js';
import { topicOf } from '../../src/device-protocol/topics.js';
import { MAX_PACKET_BYTES } from '../../src/gateway/broker.js';
import { connectProtocolLevel, Mqtt5Translation, REASON, speakingMqtt5 } from '../../src/gateway/mqtt5.js';
import { limitPacketSize } from '../../src/gateway/packet-guard.js';
import { startCloud, type Cloud, type RealDevice } from './fixture.js';

const waitFor = <T>(check: () => T | Promise<T>) => vi.waitFor(check, { timeout: 5000, interval: 20 });

function connectBytes(protocolVersion: 3 | 4 | 5): Buffer {
  const protocolId = protocolVersion === 3 ? 'MQIsdp' : 'MQTT';
  return mqttPacket.generate({ cmd: 'connect', protocolId, protocolVersion, clientId: 'a-device', clean: true, keepalive: 30 }, { protocolVersion });
}

describe('connectProtocolLevel: the version a connection speaks, from its first bytes', () => {
  it.each([3, 4, 5] as const)('reads level %i from a CONNECT, and asks for more bytes until it has it', (level) => {
    const bytes = connectBytes(level);
    expect(connectProtocolLevel(bytes)).toBe(level);
    const at = level === 3 ? 10 : 8;
    for (let n = 0; n <= at; n++) expect(connectProtocolLevel(bytes.subarray(0, n))).toBeUndefined();
  });

  it('leaves what is no CONNECT to the broker, which refuses it', () => {
    expect(connectProtocolLevel(Buffer.from([0x30, 0x02, 0x00, 0x00]))).toBeNull();
    expect(connectProtocolLevel(Buffer.from([0x10, 0x80, 0x80, 0x80, 0x80, 0x01]))).toBeNull();
    expect(connectProtocolLevel(Buffer.from([0x10, 0x20, 0x00, 0x40, 0x00]))).toBeNull();
  });
});

describe('Mqtt5Translation: an MQTT 5 device as aedes (3.1.1) takes it', () => {
  const connect = (clean: boolean, properties: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Packet =>
    ({ cmd: 'connect', protocolId: 'MQTT', protocolVersion: 5, clientId: 'd', clean, keepalive: 30, properties, ...extra }) as Packet;
  const CONNACK: Packet = { cmd: 'connack', returnCode: 0, sessionPresent: false };
  const publish = (messageId: number, qos: 1 | 2 = 1, payload = '{}'): Packet => ({ cmd: 'publish', topic: 'appliance/d/command', payload: Buffer.from(payload), qos, retain: false, dup: false, messageId });
  /** A translation past a successful CONNACK, of a device that connected with `properties`. */
  const connected = (properties: Record<string, unknown> = {}) => {
    const translation = new Mqtt5Translation(1000);
    translation.fromDevice(connect(true, properties));
    translation.fromBroker(CONNACK);
    return translation;
  };

  it('takes a kept session up on a clean start of 0, and has it end with the connection unless it has an expiry', () => {
    const session = (packet: Packet) => {
      const { toBroker, sessionEnds, startsOver } = new Mqtt5Translation(1000).fromDevice(packet);
      return { clean: (toBroker[0] as { clean: boolean }).clean, endsWithConnection: sessionEnds, ...(startsOver ? { startsOver } : {}) };
    };
    expect(session(connect(true))).toEqual({ clean: true, endsWithConnection: true });
    expect(session(connect(false))).toEqual({ clean: false, endsWithConnection: true });
    expect(session(connect(false, { sessionExpiryInterval: 0 }))).toEqual({ clean: false, endsWithConnection: true });
    expect(session(connect(false, { sessionExpiryInterval: 3600 }))).toEqual({ clean: false, endsWithConnection: false });
    // A clean start to be kept: not 3.1.1's clean session, which would end with the connection; the broker empties the old one.
    expect(session(connect(true, { sessionExpiryInterval: 3600 }))).toEqual({ clean: false, endsWithConnection: false, startsOver: true });
    // The expiry a normal DISCONNECT sets is the session's last word (MQTT 5, 3.14.2.2.2).
    const translation = connected({ sessionExpiryInterval: 3600 });
    expect(translation.fromDevice({ cmd: 'disconnect', reasonCode: 0, properties: { sessionExpiryInterval: 0 } })).toEqual({ toBroker: [{ cmd: 'disconnect' }], toDevice: [], sessionEnds: true });
    // A session that had none cannot be given an expiry as it ends: a protocol error, and the will goes out.
    expect(connected().fromDevice({ cmd: 'disconnect', reasonCode: 0, properties: { sessionExpiryInterval: 60 } })).toEqual({
      toBroker: [],
      toDevice: [{ cmd: 'disconnect', reasonCode: REASON.protocolError }],
      close: true,
    });
  });

  it('passes the credentials and the will, without what 3.1.1 cannot carry', () => {
    const will = { topic: 'appliance/d/connection', payload: Buffer.from('{"online":false}'), qos: 1, retain: true, properties: { willDelayInterval: 10 } };
    const [out] = new Mqtt5Translation(1000).fromDevice(connect(true, { receiveMaximum: 10 }, { username: 'd', password: Buffer.from('s'), will })).toBroker;
    expect(out).toEqual({
      cmd: 'connect', protocolId: 'MQTT', protocolVersion: 4, clean: true, clientId: 'd', keepalive: 30, username: 'd', password: Buffer.from('s'),
      will: { topic: will.topic, payload: will.payload, qos: 1, retain: true },
    });
    // A password without a user name, which 3.1.1 cannot say: left out, so the broker refuses the device.
    const [alone] = new Mqtt5Translation(1000).fromDevice(connect(true, {}, { password: Buffer.from('s') })).toBroker;
    expect(alone).not.toHaveProperty('password');
  });

  it('refuses enhanced authentication in the CONNACK (0x8C), before the broker sees the device, and a second CONNECT as a protocol error', () => {
    expect(new Mqtt5Translation(1000).fromDevice(connect(true, { authenticationMethod: 'SCRAM-SHA-1' }))).toEqual({
      toBroker: [],
      toDevice: [{ cmd: 'connack', sessionPresent: false, reasonCode: REASON.badAuthenticationMethod }],
      close: true,
    });
    expect(connected().fromDevice(connect(true, { authenticationMethod: 'SCRAM-SHA-1' }))).toEqual({ toBroker: [], toDevice: [{ cmd: 'disconnect', reasonCode: REASON.protocolError }], close: true });
  });

  it.each([{ receiveMaximum: 0 }, { maximumPacketSize: 0 }])('refuses a CONNECT with %o, a protocol error, in the CONNACK (0x82)', (properties) => {
    expect(new Mqtt5Translation(1000).fromDevice(connect(true, properties))).toEqual({
      toBroker: [],
      toDevice: [{ cmd: 'connack', sessionPresent: false, reasonCode: REASON.protocolError }],
      close: true,
    });
  });

  it.each([
    [0, REASON.success],
    [1, REASON.unsupportedProtocolVersion],
    [2, REASON.clientIdNotValid],
    [3, REASON.serverUnavailable],
    [4, REASON.badUserNameOrPassword],
    [5, REASON.notAuthorized],
  ])('says CONNACK return code %i as reason code %i, with what the broker takes only on success', (returnCode, reasonCode) => {
    const [connack] = new Mqtt5Translation(1000).fromBroker({ cmd: 'connack', returnCode, sessionPresent: false }).toDevice;
    expect(connack).toMatchObject({ cmd: 'connack', reasonCode });
    expect((connack as IConnackPacket).properties).toEqual(
      reasonCode === 0 ? { maximumPacketSize: 1000, subscriptionIdentifiersAvailable: false, sharedSubscriptionAvailable: false } : undefined,
    );
  });

  it('says a refused subscription is not authorized (0x87), a shared one not supported (0x9E), and answers an UNSUBSCRIBE with a code per topic', () => {
    const translation = connected();
    translation.fromDevice({ cmd: 'subscribe', messageId: 3, subscriptions: [{ topic: 'a', qos: 1 }, { topic: 'b', qos: 1 }, { topic: '$share/g/c', qos: 0 }] });
    expect(translation.fromBroker({ cmd: 'suback', messageId: 3, granted: [1, 0x80, 0x80] }).toDevice).toEqual([{ cmd: 'suback', messageId: 3, granted: [1, 0x87, 0x9e] }]);
    translation.fromDevice({ cmd: 'unsubscribe', messageId: 4, unsubscriptions: ['a', 'b'], properties: {} } as Packet);
    expect(translation.fromBroker({ cmd: 'unsuback', messageId: 4 } as Packet).toDevice).toEqual([{ cmd: 'unsuback', messageId: 4, granted: [0, 0] }]);
  });

  it('disconnects a device that uses a topic alias or a subscription identifier, which the CONNACK said it may not, or subscribes to nothing', () => {
    const translation = new Mqtt5Translation(1000);
    translation.fromDevice(connect(true));
    // Before a successful CONNACK, MQTT 5 lets the server only close the connection.
    const early = translation.fromDevice({ cmd: 'publish', topic: 't', payload: Buffer.from('{}'), qos: 0, retain: false, dup: false, properties: { topicAlias: 1 } });
    expect(early).toEqual({ toBroker: [], toDevice: [], close: true });
    translation.fromBroker(CONNACK);
    const alias = translation.fromDevice({ cmd: 'publish', topic: 't', payload: Buffer.from('{}'), qos: 0, retain: false, dup: false, properties: { topicAlias: 1 } });
    expect(alias).toEqual({ toBroker: [], toDevice: [{ cmd: 'disconnect', reasonCode: REASON.topicAliasInvalid }], close: true });
    const identified = translation.fromDevice({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 't', qos: 1 }], properties: { subscriptionIdentifier: 7 } });
    expect(identified.toDevice).toEqual([{ cmd: 'disconnect', reasonCode: REASON.subscriptionIdentifiersNotSupported }]);
    // MQTT 5 (3.8.3, 3.10.3): a SUBSCRIBE or UNSUBSCRIBE names at least one topic.
    expect(translation.fromDevice({ cmd: 'subscribe', messageId: 2, subscriptions: [] }).toDevice).toEqual([{ cmd: 'disconnect', reasonCode: REASON.protocolError }]);
    expect(translation.fromDevice({ cmd: 'unsubscribe', messageId: 3, unsubscriptions: [] }).toDevice).toEqual([{ cmd: 'disconnect', reasonCode: REASON.protocolError }]);
  });

  it('says in the PUBACK of a refused publish that it was refused (0x83) and why, when the device wants problems told', () => {
    const told = connected();
    told.refuse(7, 'targetHumidity must be between 30 and 70 in steps of 5; got 56');
    expect(told.fromBroker({ cmd: 'puback', messageId: 7 }).toDevice).toEqual([
      { cmd: 'puback', messageId: 7, reasonCode: REASON.implementationSpecificError, properties: { reasonString: 'targetHumidity must be between 30 and 70 in steps of 5; got 56' } },
    ]);
    // The packet id is free again: its next use is another publish.
    expect(told.fromBroker({ cmd: 'puback', messageId: 7 }).toDevice).toEqual([{ cmd: 'puback', messageId: 7, reasonCode: REASON.success }]);

    const untold = connected({ requestProblemInformation: false });
    untold.refuse(8, 'no');
    expect(untold.fromBroker({ cmd: 'puback', messageId: 8 }).toDevice).toEqual([{ cmd: 'puback', messageId: 8, reasonCode: REASON.implementationSpecificError }]);
  });

  it("ends a refused QoS 2 publish with a PUBREC of 0x83, and completes aedes' side of the flow itself", () => {
    const translation = connected();
    translation.refuse(9, 'no');
    expect(translation.fromBroker({ cmd: 'pubrec', messageId: 9 })).toEqual({
      toBroker: [{ cmd: 'pubrel', messageId: 9 }],
      toDevice: [{ cmd: 'pubrec', messageId: 9, reasonCode: REASON.implementationSpecificError, properties: { reasonString: 'no' } }],
    });
    expect(translation.fromBroker({ cmd: 'pubcomp', messageId: 9 })).toEqual({ toBroker: [], toDevice: [] });
  });

  it("keeps to the device's Receive Maximum: publishes past it wait for an acknowledgement, and nothing else waits", () => {
    const translation = connected({ receiveMaximum: 1 });
    expect(translation.fromBroker(publish(1)).toDevice).toHaveLength(1);
    expect(translation.fromBroker(publish(2, 2)).toDevice).toEqual([]);
    expect(translation.fromBroker({ cmd: 'pingresp' }).toDevice).toEqual([{ cmd: 'pingresp' }]);
    expect(translation.fromDevice({ cmd: 'puback', messageId: 1, reasonCode: 0 })).toEqual({ toBroker: [{ cmd: 'puback', messageId: 1 }], toDevice: [publish(2, 2)] });
    // A QoS 2 publish holds its place until its PUBCOMP, its PUBREL going out meanwhile.
    expect(translation.fromBroker(publish(3)).toDevice).toEqual([]);
    expect(translation.fromDevice({ cmd: 'pubrec', messageId: 2, reasonCode: 0 }).toDevice).toEqual([]);
    expect(translation.fromBroker({ cmd: 'pubrel', messageId: 2 }).toDevice).toEqual([{ cmd: 'pubrel', messageId: 2, reasonCode: 0 }]);
    expect(translation.fromDevice({ cmd: 'pubcomp', messageId: 2, reasonCode: 0 })).toEqual({ toBroker: [{ cmd: 'pubcomp', messageId: 2 }], toDevice: [publish(3)] });
  });

  it('lets go of a device that acknowledges none of a thousand publishes waiting for it (0x97)', () => {
    const translation = connected({ receiveMaximum: 1 });
    for (let id = 1; id <= 1001; id++) expect(translation.fromBroker(publish(id)).close).toBeUndefined();
    expect(translation.fromBroker(publish(1002))).toEqual({ toBroker: [], toDevice: [{ cmd: 'disconnect', reasonCode: REASON.quotaExceeded }], close: true });
  });

  it("answers aedes' PUBREL itself for a QoS 2 flow the device ended with a PUBREC of 0x80 or more", () => {
    const translation = connected();
    translation.fromBroker(publish(5, 2));
    expect(translation.fromDevice({ cmd: 'pubrec', messageId: 5, reasonCode: 0x80 })).toEqual({ toBroker: [{ cmd: 'pubrec', messageId: 5 }], toDevice: [] });
    expect(translation.fromBroker({ cmd: 'pubrel', messageId: 5 })).toEqual({ toBroker: [{ cmd: 'pubcomp', messageId: 5 }], toDevice: [] });
  });

  it("keeps to the device's Maximum Packet Size: a reason string is left out, a publish is not sent and is acknowledged to aedes", () => {
    const translation = connected({ maximumPacketSize: 40 });
    translation.refuse(3, 'a problem far too long to fit in forty bytes of packet');
    expect(translation.fromBroker({ cmd: 'puback', messageId: 3 }).toDevice).toEqual([{ cmd: 'puback', messageId: 3, reasonCode: REASON.implementationSpecificError, properties: undefined }]);
    expect(translation.fromBroker(publish(4, 1, 'x'.repeat(100)))).toEqual({ toBroker: [{ cmd: 'puback', messageId: 4 }], toDevice: [] });
    expect(translation.fromBroker(publish(6, 2, 'x'.repeat(100)))).toEqual({ toBroker: [{ cmd: 'pubrec', messageId: 6 }], toDevice: [] });
    expect(translation.fromBroker({ cmd: 'pubrel', messageId: 6 })).toEqual({ toBroker: [{ cmd: 'pubcomp', messageId: 6 }], toDevice: [] });
    expect(translation.fromBroker(publish(7, 1, 'small')).toDevice).toHaveLength(1);

    // One that waited under the Receive Maximum is acknowledged to aedes when its turn comes.
    const waiting = connected({ maximumPacketSize: 40, receiveMaximum: 1 });
    waiting.fromBroker(publish(1, 1, 'small'));
    expect(waiting.fromBroker(publish(2, 1, 'x'.repeat(100)))).toEqual({ toBroker: [], toDevice: [] });
    expect(waiting.fromDevice({ cmd: 'puback', messageId: 1, reasonCode: 0 })).toEqual({ toBroker: [{ cmd: 'puback', messageId: 1 }, { cmd: 'puback', messageId: 2 }], toDevice: [] });
  });

  it('tells the device why the broker ends its connection, once, and only after a successful CONNACK', () => {
    const translation = new Mqtt5Translation(1000);
    translation.leaveWith(REASON.notAuthorized, 'not authorized to publish to x');
    expect(translation.farewell()).toBeNull();
    translation.fromBroker(CONNACK);
    expect(translation.farewell()).toBeNull();
    translation.leaveWith(REASON.notAuthorized, 'not authorized to publish to x');
    expect(translation.farewell()).toEqual({ cmd: 'disconnect', reasonCode: REASON.notAuthorized, properties: { reasonString: 'not authorized to publish to x' } });
    expect(translation.farewell()).toBeNull();
  });

  it.each([REASON.disconnectWithWill, REASON.unspecified])('ends the connection without a DISCONNECT to the broker, so that the will goes out, on a DISCONNECT of %i', (reasonCode) => {
    expect(connected().fromDevice({ cmd: 'disconnect', reasonCode })).toEqual({ toBroker: [], toDevice: [], close: true });
    expect(connected().fromDevice({ cmd: 'disconnect', reasonCode: 0 }).toBroker).toEqual([{ cmd: 'disconnect' }]);
  });
});

describe('embedded broker: MQTT 5 devices (DESIGN B)', () => {
  let cloud: Cloud;

  beforeEach(async () => {
    cloud = await startCloud('embedded', { protocolVersion: 5 });
  });
  afterEach(() => cloud.close());

  const state = (deviceId: string) => cloud.ctx.devices.state(deviceId);

  it('refuses a wrong secret and a borrowed client id with the reason codes of MQTT 5', async () => {
    const device = await cloud.addDevice();
    const attempt = (clientId: string, password: string) => connectAsync(cloud.url, { protocolVersion: 5, clientId, username: device.deviceId, password, reconnectPeriod: 0 }, false);
    await expect(attempt(device.deviceId, 'not-the-secret')).rejects.toMatchObject({ code: REASON.badUserNameOrPassword });
    await expect(attempt('someone-else', device.secret)).rejects.toMatchObject({ code: REASON.notAuthorized });
  });

  it("tells the device the broker's bounds in the CONNACK, and refuses a subscription outside its topics as not authorized", async () => {
    const [device, other] = [await cloud.addDevice(), await cloud.addDevice()];
    const client = await cloud.connect(device);
    const probe = connect(cloud.url, { protocolVersion: 5, clientId: other.deviceId, username: other.deviceId, password: other.secret, reconnectPeriod: 0 });
    const connack = await new Promise<IConnackPacket>((resolve) => probe.once('connect', resolve));
    await probe.endAsync();
    expect(connack.properties).toMatchObject({ maximumPacketSize: MAX_PACKET_BYTES, subscriptionIdentifiersAvailable: false, sharedSubscriptionAvailable: false });

    const granted = await client.mqtt.subscribeAsync(`appliance/${device.deviceId}/#`, { qos: 1 });
    expect(granted.map((g) => g.qos)).toEqual([1]);
    const refused = await client.mqtt.subscribeAsync(topicOf(other.deviceId, 'command'), { qos: 1 }).catch((error: unknown) => error);
    expect(String(refused)).toMatch(/Subscribe error/);
    const unsubscribed = await client.mqtt.unsubscribeAsync([`appliance/${device.deviceId}/#`, topicOf(device.deviceId, 'command')]);
    expect((unsubscribed as { granted?: number[] } | undefined)?.granted).toEqual([REASON.success, REASON.success]);
  });

  it("tells a device that publishes under another's topics that it is not authorized (0x87) as it disconnects it", async () => {
    const [intruder, victim] = [await cloud.addDevice(), await cloud.addDevice()];
    const client = await cloud.connect(intruder, { reconnectPeriod: 0 });
    const disconnected = new Promise<IDisconnectPacket>((resolve) => client.mqtt.once('disconnect', resolve));
    client.mqtt.publish(topicOf(victim.deviceId, 'state'), '{"humidity":{"currentHumidity":99}}', { qos: 1 });
    const packet = await disconnected;
    expect([packet.reasonCode, packet.properties?.reasonString]).toEqual([REASON.notAuthorized, `not authorized to publish to ${topicOf(victim.deviceId, 'state')}`]);
    await waitFor(async () => expect((await state(intruder.deviceId)).online).toBe(false));
    expect((await state(victim.deviceId)).status).not.toMatchObject({ humidity: { currentHumidity: 99 } });
  });

  it('tells a device unregistered by another process that it is not authorized (0x87) at its next publish, which is not stored', async () => {
    const device = await cloud.addDevice();
    const client = await cloud.connect(device, { reconnectPeriod: 0 });
    await waitFor(async () => expect((await state(device.deviceId)).online).toBe(true));
    // Straight in the store, as the admin CLI on the same SQLite file does: this process is not told, and reads it again after the lookup TTL.
    expect(await cloud.ctx.store.unregisterDevice(device.deviceId, cloud.world.userNumber, Date.now())).toBe(true);
    await sleep(LOOKUP_TTL_MS + 100);
    const disconnected = new Promise<IDisconnectPacket>((resolve) => client.mqtt.once('disconnect', resolve));
    client.mqtt.publish(topicOf(device.deviceId, 'state'), '{"humidity":{"currentHumidity":99}}', { qos: 1 });
    const packet = await disconnected;
    expect([packet.reasonCode, packet.properties?.reasonString]).toEqual([REASON.notAuthorized, 'the device is no longer registered with the secret it connected with']);
  });

  it('tells the older connection of a device that a newer one took its session over (0x8E), and the device stays online', async () => {
    const device = await cloud.addDevice();
    const older = await cloud.connect(device, { reconnectPeriod: 0 });
    const disconnected = new Promise<IDisconnectPacket>((resolve) => older.mqtt.once('disconnect', resolve));
    await cloud.connect(device);
    const packet = await disconnected;
    expect([packet.reasonCode, packet.properties?.reasonString]).toEqual([REASON.sessionTakenOver, 'a newer connection of the device took its session over']);
    await waitFor(async () => expect((await state(device.deviceId)).online).toBe(true));
  });

  /** A device on a bare socket, speaking MQTT 5 packet by packet, with what the broker sends it. */
  async function bareDevice(device: RealDevice, connectProperties: Record<string, unknown> = {}, clean = true) {
    const socket = createConnection(Number(new URL(cloud.url).port), '127.0.0.1');
    await once(socket, 'connect');
    const received: Packet[] = [];
    const parser = mqttPacket.parser({ protocolVersion: 5 });
    parser.on('packet', (packet: Packet) => received.push(packet));
    socket.on('data', (chunk: Buffer) => parser.parse(chunk));
    const closed = once(socket, 'close');
    const send = (packet: Packet) => socket.write(mqttPacket.generate(packet, { protocolVersion: 5 }));
    send({
      cmd: 'connect', protocolId: 'MQTT', protocolVersion: 5, clientId: device.deviceId, username: device.deviceId, password: Buffer.from(device.secret), clean, keepalive: 30,
      will: { topic: topicOf(device.deviceId, 'connection'), payload: Buffer.from('{"online":false}'), qos: 1, retain: true },
      properties: connectProperties,
    });
    return { socket, received, closed, send };
  }

  it('keeps a session past its connection only with an expiry, and takes a kept one up on a clean start of 0 (MQTT 5, 3.1.2.4, 3.1.2.11.2)', async () => {
    const device = await cloud.addDevice();
    /** Connects, subscribes once, disconnects normally (with `expiry` in the DISCONNECT when given); whether the session was there. */
    const visit = async (properties: Record<string, unknown>, expiry?: number) => {
      const { received, closed, send } = await bareDevice(device, properties, false);
      await waitFor(() => expect(received[0]?.cmd).toBe('connack'));
      send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: topicOf(device.deviceId, 'command'), qos: 1 }] });
      await waitFor(() => expect(received.map((p) => p.cmd)).toContain('suback'));
      send({ cmd: 'disconnect', reasonCode: 0, ...(expiry === undefined ? {} : { properties: { sessionExpiryInterval: expiry } }) });
      await closed;
      return (received[0] as IConnackPacket).sessionPresent;
    };
    expect(await visit({ sessionExpiryInterval: 3600 })).toBe(false);
    // No expiry this time: the kept session is taken up, and ends with this connection.
    expect(await visit({})).toBe(true);
    expect(await visit({ sessionExpiryInterval: 3600 })).toBe(false);
    // An expiry of 0 in the DISCONNECT ends it too.
    expect(await visit({ sessionExpiryInterval: 3600 }, 0)).toBe(true);
    expect(await visit({ sessionExpiryInterval: 3600 })).toBe(false);
  });

  it('gives a kept session taken up with a clean start of 0 its subscriptions, and an ended one none', async () => {
    const device = await cloud.addDevice();
    const record = await cloud.ctx.devices.get(device.deviceId);
    /**
     * Connects (without a clean start unless told), subscribes to its commands only when told, is sent
     * a command while connected, and leaves normally; the commands it got. Commands go out at QoS 0
     * and are never queued, so what a kept session shows is its subscription.
     */
    const visit = async (properties: Record<string, unknown>, options: { clean?: boolean; subscribe?: boolean } = {}) => {
      const { received, closed, send } = await bareDevice(device, properties, options.clean ?? false);
      await waitFor(() => expect(received[0]?.cmd).toBe('connack'));
      if (options.subscribe) {
        send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: topicOf(device.deviceId, 'command'), qos: 1 }] });
        await waitFor(() => expect(received.map((p) => p.cmd)).toContain('suback'));
      }
      // Nobody answers: it fails at its timeout, long after the broker handed it on.
      await cloud.gateway.channel.sendCommand(record, {}, { n: 1 } as never, 50);
      // Written before the PINGRESP, if at all.
      send({ cmd: 'pingreq' });
      await waitFor(() => expect(received.map((p) => p.cmd)).toContain('pingresp'));
      send({ cmd: 'disconnect', reasonCode: 0 });
      await closed;
      return received.filter((p) => p.cmd === 'publish').length;
    };

    expect(await visit({ sessionExpiryInterval: 3600 }, { subscribe: true })).toBe(1);
    // No expiry this time: it takes the kept session up, its subscription included, and ends it.
    expect(await visit({})).toBe(1);
    expect(await visit({ sessionExpiryInterval: 3600 })).toBe(0);
    // A clean start with an expiry: the old session's subscription is gone, and the new session is kept.
    expect(await visit({ sessionExpiryInterval: 3600 }, { subscribe: true })).toBe(1);
    expect(await visit({ sessionExpiryInterval: 3600 }, { clean: true })).toBe(0);
    expect(await visit({ sessionExpiryInterval: 3600 }, { clean: true, subscribe: true })).toBe(1);
    expect(await visit({ sessionExpiryInterval: 3600 })).toBe(1);
  });

  it('leaves the reason string out of a PUBACK that would pass the packet size the device asked for', async () => {
    const device = await cloud.addDevice();
    const { socket, received, send } = await bareDevice(device, { maximumPacketSize: 32 });
    send({ cmd: 'publish', topic: topicOf(device.deviceId, 'state'), payload: Buffer.from('{"humidity":{"currentHumidity":"wet"}}'), qos: 1, retain: false, dup: false, messageId: 1 });
    await waitFor(() => expect(received.map((p) => p.cmd)).toEqual(['connack', 'puback']));
    expect(received[1]).toMatchObject({ reasonCode: REASON.implementationSpecificError });
    expect((received[1] as { properties?: { reasonString?: string } }).properties?.reasonString).toBeUndefined();
    socket.destroy();
  });

  it('disconnects a device that sends a topic alias with reason 0x94, and its will marks it offline', async () => {
    const device = await cloud.addDevice();
    const { received, closed, send } = await bareDevice(device);
    send({ cmd: 'publish', topic: topicOf(device.deviceId, 'connection'), payload: Buffer.from('{"online":true}'), qos: 1, retain: true, dup: false, messageId: 1 });
    await waitFor(async () => expect((await state(device.deviceId)).online).toBe(true));
    // Online already from its connection: the PUBACK comes once the message is stored, and the alias below would end the connection before it.
    await waitFor(() => expect(received.map((p) => p.cmd)).toContain('puback'));

    send({ cmd: 'publish', topic: topicOf(device.deviceId, 'state'), payload: Buffer.from('{"humidity":{"currentHumidity":40}}'), qos: 1, retain: false, dup: false, messageId: 2, properties: { topicAlias: 1 } });
    await closed;
    expect(received.map((p) => [p.cmd, (p as { reasonCode?: number }).reasonCode])).toEqual([
      ['connack', REASON.success],
      ['puback', REASON.success],
      ['disconnect', REASON.topicAliasInvalid],
    ]);
    await waitFor(async () => expect((await state(device.deviceId)).online).toBe(false));
    expect((await state(device.deviceId)).status).not.toMatchObject({ humidity: { currentHumidity: 40 } });
  });
});

function connectPacket(device: RealDevice): Buffer {
  return mqttPacket.generate(
    { cmd: 'connect', protocolId: 'MQTT', protocolVersion: 5, clientId: device.deviceId, username: device.deviceId, password: Buffer.from(device.secret), clean: true, keepalive: 30 },
    { protocolVersion: 5 },
  );
}

describe('embedded broker: hostile MQTT 5 input (DESIGN J)', () => {
  let cloud: Cloud;

  beforeEach(async () => {
    cloud = await startCloud('embedded', { protocolVersion: 5 });
  });
  afterEach(() => cloud.close());

  /** Connects as the device over a bare socket with MQTT 5, sends `bytes`, and resolves once the broker has answered or closed. */
  async function sendAfterConnect(device: RealDevice, bytes: Buffer): Promise<void> {
    const socket = createConnection(Number(new URL(cloud.url).port), '127.0.0.1');
    socket.on('error', () => undefined);
    socket.on('data', () => undefined);
    await once(socket, 'connect');
    socket.write(Buffer.concat([connectPacket(device), bytes]));
    await Promise.race([once(socket, 'close'), sleep(100)]);
    socket.destroy();
  }

  /** Packets that parse as MQTT 5 but that 3.1.1 cannot say, or that only a server sends. */
  const ODD = {
    'a PUBLISH with an empty topic and no alias': Buffer.from([0x30, 0x05, 0x00, 0x00, 0x00, 0x7b, 0x7d]),
    'a SUBSCRIBE of no topic': Buffer.from([0x82, 0x03, 0x00, 0x01, 0x00]),
    'an UNSUBSCRIBE of no topic': Buffer.from([0xa2, 0x03, 0x00, 0x01, 0x00]),
    'an AUTH': mqttPacket.generate({ cmd: 'auth', reasonCode: 0x18, properties: { authenticationMethod: 'x' } }, { protocolVersion: 5 }),
    'a CONNACK': mqttPacket.generate({ cmd: 'connack', reasonCode: 0, sessionPresent: false }, { protocolVersion: 5 }),
    'a SUBACK': mqttPacket.generate({ cmd: 'suback', messageId: 1, granted: [0] }, { protocolVersion: 5 }),
  };

  it.each(Object.entries(ODD))('ends the connection on %s, and the process lives', async (_what, bytes) => {
    const device = await cloud.addDevice();
    const socket = createConnection(Number(new URL(cloud.url).port), '127.0.0.1');
    socket.on('data', () => undefined);
    socket.on('error', () => undefined);
    await once(socket, 'connect');
    socket.write(connectPacket(device));
    socket.write(bytes);
    await once(socket, 'close');
  });

  const packets = fc.oneof(
    fc.constantFrom(...Object.values(ODD)),
    fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
    // Well-framed packets of every type with bodies of anything: the parser's and the edge's paths.
    fc.tuple(fc.integer({ min: 1, max: 15 }), fc.integer({ min: 0, max: 15 }), fc.uint8Array({ maxLength: 40 })).map(([type, flags, body]) =>
      Buffer.concat([Buffer.from([(type << 4) | flags, body.length]), Buffer.from(body)]),
    ),
  );

  it('lives through any bytes after an MQTT 5 CONNECT, and still serves a well-behaved device', { timeout: 60_000 }, async () => {
    const [hostile, honest] = [await cloud.addDevice(), await cloud.addDevice()];
    await fc.assert(
      fc.asyncProperty(fc.array(packets, { minLength: 1, maxLength: 4 }), async (list) => sendAfterConnect(hostile, Buffer.concat(list))),
      { numRuns: 60 },
    );
    const client = await cloud.connect(honest);
    await client.report({ humidity: { currentHumidity: 47 } });
    expect((await cloud.ctx.devices.state(honest.deviceId)).status).toMatchObject({ humidity: { currentHumidity: 47 } });
  });
});

const MOSQUITTO_CLIENTS = spawnSync('mosquitto_pub', ['--help']).error === undefined;
if (!MOSQUITTO_CLIENTS) console.warn('mosquitto_pub is not installed (Debian: mosquitto-clients): the embedded broker is not tried with libmosquitto.');

/** libmosquitto's own MQTT 5 codec: mqtt.js shares mqtt-packet with the broker, so it cannot tell a codec's slip. */
describe.skipIf(!MOSQUITTO_CLIENTS)('embedded broker: MQTT 5 with mosquitto_pub and mosquitto_sub (libmosquitto)', () => {
  let cloud: Cloud;

  beforeEach(async () => {
    cloud = await startCloud('embedded', { protocolVersion: 5 });
  });
  afterEach(() => cloud.close());

  const run = (command: string, device: RealDevice, args: string[], password = device.secret) =>
    new Promise<{ code: number | null; output: string }>((resolve) => {
      const port = new URL(cloud.url).port;
      const child = spawn(command, ['-V', '5', '-h', '127.0.0.1', '-p', port, '-i', device.deviceId, '-u', device.deviceId, '-P', password, '-d', ...args]);
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.on('close', (code) => resolve({ code, output }));
    });

  it('stores a report and answers a refused one with 0x83', async () => {
    const device = await cloud.addDevice();
    const stored = await run('mosquitto_pub', device, ['-q', '1', '-t', topicOf(device.deviceId, 'state'), '-m', '{"humidity":{"currentHumidity":43}}']);
    expect(stored.output).toMatch(/received PUBACK \(Mid: \d+, RC:0\)/);
    expect((await cloud.ctx.devices.state(device.deviceId)).status).toMatchObject({ humidity: { currentHumidity: 43 } });

    const refused = await run('mosquitto_pub', device, ['-q', '1', '-t', topicOf(device.deviceId, 'state'), '-m', '{"humidity":{"currentHumidity":"wet"}}']);
    expect(refused.output).toMatch(/received PUBACK \(Mid: \d+, RC:131\)/);
  });

  it('refuses a wrong secret with 0x86', async () => {
    const device = await cloud.addDevice();
    const { code, output } = await run('mosquitto_pub', device, ['-q', '1', '-t', topicOf(device.deviceId, 'state'), '-m', '{}'], 'not-the-secret');
    expect(code).not.toBe(0);
    expect(output).toMatch(/received CONNACK \(134\)/);
  });

  it('subscribes mosquitto_sub and sends it what is retained under its topics', async () => {
    const device = await cloud.addDevice();
    const topic = topicOf(device.deviceId, 'connection');
    await run('mosquitto_pub', device, ['-q', '1', '-r', '-t', topic, '-m', '{"online":true}']);
    const { code, output } = await run('mosquitto_sub', device, ['-q', '1', '-t', topic, '-C', '1', '-W', '10']);
    expect(code).toBe(0);
    expect(output).toMatch(/received SUBACK/);
    expect(output).toContain('{"online":true}');
  });
});

describe('speakingMqtt5 under load: aedes held back by an MQTT 5 device that does not read (DESIGN J)', () => {
  it.each([4, 5] as const)('holds the publisher back while a subscriber on MQTT %i does not read, and buffers little for it', async (version) => {
    const aedes = await Aedes.createBroker();
    const sockets: Socket[] = [];
    const server = createServer((socket) => {
      sockets.push(socket);
      aedes.handle(speakingMqtt5(limitPacketSize(socket, MAX_PACKET_BYTES, () => undefined), MAX_PACKET_BYTES, { sessionEnds: () => undefined, startsOver: () => undefined }));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    const generate = (packet: Packet) => mqttPacket.generate(packet, { protocolVersion: version });
    try {
      const subscriber = createConnection(port, '127.0.0.1');
      await once(subscriber, 'connect');
      subscriber.write(generate({ cmd: 'connect', protocolId: 'MQTT', protocolVersion: version, clientId: 'subscriber', clean: true, keepalive: 0 }));
      subscriber.write(generate({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 't', qos: 0 }] }));
      await sleep(200);
      subscriber.pause();
      const publisher = createConnection(port, '127.0.0.1');
      await once(publisher, 'connect');
      publisher.on('data', () => undefined);
      publisher.write(mqttPacket.generate({ cmd: 'connect', protocolId: 'MQTT', protocolVersion: 4, clientId: 'publisher', clean: true, keepalive: 0 }));
      const message = mqttPacket.generate({ cmd: 'publish', topic: 't', payload: Buffer.alloc(60_000, 0x61), qos: 0, retain: false, dup: false });
      // 60 MB offered within 3 s, as fast as the broker reads it.
      const until = Date.now() + 3000;
      let sent = 0;
      while (sent < 1000 && Date.now() < until) {
        if (publisher.writableLength < 500_000) {
          publisher.write(message);
          sent += 1;
        } else await sleep(2);
      }
      // aedes stops reading the publisher while the subscriber has not taken what it was sent (about
      // 170 messages in, here), where it would buffer all of them for a stream that never pushed back.
      expect(sent).toBeLessThan(500);
      expect(sockets[0]!.writableLength).toBeLessThan(2_000_000);
      subscriber.destroy();
      publisher.destroy();
    } finally {
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      server.close();
    }
  });
});
