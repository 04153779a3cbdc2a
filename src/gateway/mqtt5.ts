/**
 * MQTT 5 devices on the embedded broker (DESIGN B: MQTT 3.1.1/5). aedes speaks 3.1.1 only, so a
 * connection whose CONNECT says 5 is translated at its edge, packet by packet: what the device sends
 * reaches aedes as 3.1.1, and what aedes sends goes back as 5. Everything the broker decides
 * (authentication, the topics a device may use, a PUBACK only once stored) stays where it is; the
 * edge maps the codes and leaves out what 3.1.1 cannot carry. A 3.1.1 or 3.1 connection passes as
 * it came. The CONNACK says what the broker does not take (topic aliases, subscription identifiers,
 * shared subscriptions) and its packet size bound; a device that uses one anyway is disconnected
 * with the reason code MQTT 5 gives for it. A report the broker refuses (it does not fit the
 * profile) is acknowledged with 0x83 and the problem, where 3.1.1 can only acknowledge it.
 */
import { Duplex } from 'node:stream';
import mqttPacket, { type Packet } from 'mqtt-packet';

const V4 = { protocolVersion: 4 } as const;
const V5 = { protocolVersion: 5 } as const;

/** MQTT 5 reason codes the edge sends (MQTT 5.0, 2.4). */
export const REASON = {
  success: 0x00,
  unspecified: 0x80,
  protocolError: 0x82,
  unsupportedProtocolVersion: 0x84,
  clientIdNotValid: 0x85,
  badUserNameOrPassword: 0x86,
  notAuthorized: 0x87,
  serverUnavailable: 0x88,
  serverShuttingDown: 0x8b,
  sessionTakenOver: 0x8e,
  badAuthenticationMethod: 0x8c,
  implementationSpecificError: 0x83,
  topicAliasInvalid: 0x94,
  subscriptionIdentifiersNotSupported: 0xa1,
  disconnectWithWill: 0x04,
} as const;

/** A 3.1.1 CONNACK return code as MQTT 5 says it. */
const CONNACK_REASONS: Record<number, number> = {
  0: REASON.success,
  1: REASON.unsupportedProtocolVersion,
  2: REASON.clientIdNotValid,
  3: REASON.serverUnavailable,
  4: REASON.badUserNameOrPassword,
  5: REASON.notAuthorized,
};

/** The 3.1.1 SUBACK failure (0x80): the broker refuses a subscription only outside the device's topics. */
const SUBACK_FAILURE = 0x80;

/**
 * The protocol level of the CONNECT that starts `bytes`: undefined while more bytes are needed,
 * null when they are no CONNECT (aedes then refuses them as it would). Pure.
 */
export function connectProtocolLevel(bytes: Uint8Array): number | null | undefined {
  if (bytes.length === 0) return undefined;
  if (bytes[0] !== 0x10) return null;
  let i = 1;
  // The remaining length: up to four bytes, each with its continuation bit.
  for (;;) {
    if (i >= bytes.length) return undefined;
    if (i > 4) return null;
    if ((bytes[i++]! & 0x80) === 0) break;
  }
  if (i + 2 > bytes.length) return undefined;
  const nameLength = (bytes[i]! << 8) | bytes[i + 1]!;
  const level = i + 2 + nameLength;
  if (nameLength > 6) return null;
  return level < bytes.length ? bytes[level]! : undefined;
}

/** What the edge does with one packet of the device: on to the broker, back to the device, and whether the connection ends. */
export interface Translated {
  toBroker: Packet[];
  toDevice: Packet[];
  close?: boolean;
}

/**
 * One MQTT 5 connection's translation, both ways. Pure: packets in, packets out. It remembers what
 * the other direction needs: how many topics each UNSUBSCRIBE named (an MQTT 5 UNSUBACK has a code
 * for each) and whether the CONNACK was a success (only then may the edge send a DISCONNECT).
 */
export class Mqtt5Translation {
  readonly #unsubscribed = new Map<number, number>();
  /** The problem of each QoS 1 publish the broker refused, by packet id, until its PUBACK goes out. */
  readonly #refused = new Map<number, string>();
  #connected = false;
  /** Whether the device lets a PUBACK carry a reason string (MQTT 5, 3.1.2.11.7). */
  #problemsWanted = true;
  /** Why the broker is about to end the connection, for the DISCONNECT that tells the device. */
  #leaving: Packet | null = null;
  /**
   * How packets to the device are written: within the packet size it asked for, mqtt-packet leaves
   * out a reason string that would pass it (MQTT 5, 3.1.2.11.4).
   */
  toDeviceOptions: { protocolVersion: 5; properties?: { maximumPacketSize: number } } = V5;

  constructor(private readonly maximumPacketSize: number) {}

  /** The broker refused the device's QoS 1 publish `messageId`: its PUBACK says so (0x83) and why. */
  refuse(messageId: number, problem: string): void {
    this.#refused.set(messageId, problem);
  }

  /** The broker is about to end the connection: the device is told why, if the connection is one by then. */
  leaveWith(reasonCode: number, reasonString: string): void {
    this.#leaving = { cmd: 'disconnect', reasonCode, properties: { reasonString } };
  }

  /** The DISCONNECT that says why the broker ended the connection, once; none when it gave no reason. */
  farewell(): Packet | null {
    const packet = this.#connected ? this.#leaving : null;
    this.#leaving = null;
    return packet;
  }

  /** A packet of the device (MQTT 5), as the broker takes it (3.1.1). */
  fromDevice(packet: Packet): Translated {
    switch (packet.cmd) {
      case 'connect': {
        const properties = packet.properties ?? {};
        if (properties.authenticationMethod !== undefined) return this.#refuseConnect(REASON.badAuthenticationMethod);
        this.#problemsWanted = properties.requestProblemInformation !== false;
        if (properties.maximumPacketSize) this.toDeviceOptions = { protocolVersion: 5, properties: { maximumPacketSize: properties.maximumPacketSize } };
        const { will } = packet;
        return pass({
          cmd: 'connect',
          protocolId: 'MQTT',
          protocolVersion: 4,
          // 3.1.1 keeps a session after the connection only when it is not clean; MQTT 5 when it has an expiry.
          clean: packet.clean !== false || !((properties.sessionExpiryInterval ?? 0) > 0),
          clientId: packet.clientId,
          keepalive: packet.keepalive,
          // 3.1.1 has no password without a user name; the broker refuses such a device either way.
          ...(packet.username !== undefined ? { username: packet.username, password: packet.password } : {}),
          ...(will ? { will: { topic: will.topic, payload: will.payload, qos: will.qos, retain: will.retain } } : {}),
        });
      }
      case 'publish':
        if (packet.properties?.topicAlias !== undefined) return this.#disconnect(REASON.topicAliasInvalid);
        return pass({ cmd: 'publish', topic: packet.topic, payload: packet.payload, qos: packet.qos, retain: packet.retain, dup: packet.dup, messageId: packet.messageId });
      case 'puback':
      case 'pubrec':
      case 'pubrel':
      case 'pubcomp':
        return pass({ cmd: packet.cmd, messageId: packet.messageId });
      case 'subscribe':
        if (packet.subscriptions.length === 0) return this.#disconnect(REASON.protocolError);
        if (packet.properties?.subscriptionIdentifier !== undefined) return this.#disconnect(REASON.subscriptionIdentifiersNotSupported);
        return pass({ cmd: 'subscribe', messageId: packet.messageId, subscriptions: packet.subscriptions.map(({ topic, qos }) => ({ topic, qos })) });
      case 'unsubscribe':
        if (packet.unsubscriptions.length === 0) return this.#disconnect(REASON.protocolError);
        this.#unsubscribed.set(packet.messageId!, packet.unsubscriptions.length);
        return pass({ cmd: 'unsubscribe', messageId: packet.messageId, unsubscriptions: packet.unsubscriptions });
      case 'pingreq':
        return pass({ cmd: 'pingreq' });
      case 'disconnect':
        // "Disconnect with Will Message": the connection ends as if dropped, which is when aedes sends the will.
        if (packet.reasonCode === REASON.disconnectWithWill) return { toBroker: [], toDevice: [], close: true };
        return pass({ cmd: 'disconnect' });
      default:
        // AUTH (no method was agreed on) and what only a server sends.
        return this.#disconnect(REASON.protocolError);
    }
  }

  /** A packet of the broker (3.1.1), as the device takes it (MQTT 5). */
  fromBroker(packet: Packet): Packet[] {
    switch (packet.cmd) {
      case 'connack': {
        const reasonCode = CONNACK_REASONS[packet.returnCode ?? 0] ?? REASON.unspecified;
        this.#connected = reasonCode === REASON.success;
        const properties = this.#connected ? { maximumPacketSize: this.maximumPacketSize, subscriptionIdentifiersAvailable: false, sharedSubscriptionAvailable: false } : undefined;
        return [{ cmd: 'connack', sessionPresent: packet.sessionPresent, reasonCode, ...(properties ? { properties } : {}) }];
      }
      case 'publish':
        return [{ cmd: 'publish', topic: packet.topic, payload: packet.payload, qos: packet.qos, retain: packet.retain, dup: packet.dup, messageId: packet.messageId }];
      case 'puback': {
        const problem = this.#refused.get(packet.messageId!);
        if (problem === undefined) return [{ cmd: 'puback', messageId: packet.messageId, reasonCode: REASON.success }];
        this.#refused.delete(packet.messageId!);
        const properties = this.#problemsWanted ? { properties: { reasonString: problem } } : {};
        return [{ cmd: 'puback', messageId: packet.messageId, reasonCode: REASON.implementationSpecificError, ...properties }];
      }
      case 'pubrec':
      case 'pubrel':
      case 'pubcomp':
        return [{ cmd: packet.cmd, messageId: packet.messageId, reasonCode: REASON.success }];
      case 'suback':
        return [{ cmd: 'suback', messageId: packet.messageId!, granted: packet.granted.map((code) => (code === SUBACK_FAILURE ? REASON.notAuthorized : code)) }];
      case 'unsuback': {
        const count = this.#unsubscribed.get(packet.messageId!) ?? 1;
        this.#unsubscribed.delete(packet.messageId!);
        return [{ cmd: 'unsuback', messageId: packet.messageId!, granted: new Array<number>(count).fill(REASON.success) }];
      }
      default:
        return [packet];
    }
  }

  #refuseConnect(reasonCode: number): Translated {
    return { toBroker: [], toDevice: [{ cmd: 'connack', sessionPresent: false, reasonCode }], close: true };
  }

  /** MQTT 5 lets the server send a DISCONNECT only after a successful CONNACK; before it, the connection just ends. */
  #disconnect(reasonCode: number): Translated {
    return { toBroker: [], toDevice: this.#connected ? [{ cmd: 'disconnect', reasonCode }] : [], close: true };
  }
}

function pass(packet: Packet): Translated {
  return { toBroker: [packet], toDevice: [] };
}

/** The translation of each MQTT 5 connection, by the stream aedes holds for it (its client's `conn`). */
const translations = new WeakMap<object, Mqtt5Translation>();

/**
 * Tells an MQTT 5 device, in its PUBACK, that its QoS 1 publish `messageId` was refused and why;
 * nothing for a 3.1.1 device, whose PUBACK cannot say it.
 */
export function refuseInPuback(stream: object, messageId: number, problem: string): void {
  translations.get(stream)?.refuse(messageId, problem);
}

/**
 * The broker is about to end an MQTT 5 device's connection: a DISCONNECT tells it why before the
 * connection ends. A 3.1.1 device is only cut off, as 3.1.1 has the server send no DISCONNECT.
 */
export function disconnectWith(stream: object, reasonCode: number, reasonString: string): void {
  translations.get(stream)?.leaveWith(reasonCode, reasonString);
}

/** How long a device told to go has to close its side before it is cut off. */
const FAREWELL_MS = 1000;

/**
 * The device's stream as aedes gets it: as it came for 3.1.1, translated for MQTT 5 (decided by the
 * first CONNECT). Ends the device's stream on a malformed MQTT 5 packet or a refusal.
 */
export function speakingMqtt5(device: Duplex, maximumPacketSize: number): Duplex {
  let mode: 'detect' | 'as-is' | 'mqtt5' = 'detect';
  let head = Buffer.alloc(0);
  const translation = new Mqtt5Translation(maximumPacketSize);
  const fromDevice = mqttPacket.parser(V5);
  const fromBroker = mqttPacket.parser(V4);
  const toDevice = (packet: Packet) => device.write(mqttPacket.generate(packet, translation.toDeviceOptions));
  const edge = new Duplex({
    allowHalfOpen: false,
    read() {
      device.resume();
    },
    write(chunk: Buffer, _encoding, callback) {
      if (mode === 'mqtt5') {
        fromBroker.parse(chunk);
        callback();
      } else device.write(chunk, callback);
    },
    // mqtt-packet writes a packet in pieces within one cork: they stay one write to the socket.
    writev(chunks: { chunk: Buffer }[], callback) {
      const bytes = Buffer.concat(chunks.map(({ chunk }) => chunk));
      if (mode === 'mqtt5') {
        fromBroker.parse(bytes);
        callback();
      } else device.write(bytes, callback);
    },
    final(callback) {
      device.end(callback);
    },
    destroy(error, callback) {
      const farewell = translation.farewell();
      if (farewell && device.writable) {
        device.end(mqttPacket.generate(farewell, translation.toDeviceOptions));
        setTimeout(() => device.destroy(), FAREWELL_MS).unref();
      } else device.destroy();
      callback(error);
    },
  });
  const toBroker = (bytes: Buffer) => {
    // The device waits while aedes has not read what it has.
    if (!edge.push(bytes)) device.pause();
  };
  // A packet the parser took that 3.1.1 cannot say (an empty topic without an alias, say) throws
  // when generated: the connection ends, as for a malformed packet, and the process goes on.
  let closing = false;
  fromDevice.on('packet', (packet: Packet) => {
    // What came after the packet that ended the connection, in the same bytes, is not the broker's.
    if (closing) return;
    try {
      const { toBroker: forward, toDevice: answer, close } = translation.fromDevice(packet);
      for (const p of forward) toBroker(mqttPacket.generate(p, V4));
      for (const p of answer) toDevice(p);
      if (close) {
        closing = true;
        device.end(() => edge.destroy());
      }
    } catch {
      closing = true;
      edge.destroy();
    }
  });
  fromDevice.on('error', () => edge.destroy());
  fromBroker.on('packet', (packet: Packet) => {
    try {
      for (const p of translation.fromBroker(packet)) toDevice(p);
    } catch (error) {
      edge.destroy(error as Error);
    }
  });
  fromBroker.on('error', (error: Error) => edge.destroy(error));
  device.on('data', (chunk: Buffer) => {
    if (mode === 'as-is') return toBroker(chunk);
    if (mode === 'mqtt5') return void fromDevice.parse(chunk);
    head = Buffer.concat([head, chunk]);
    const level = connectProtocolLevel(head);
    if (level === undefined) return;
    mode = level === 5 ? 'mqtt5' : 'as-is';
    if (mode === 'mqtt5') {
      translations.set(edge, translation);
      fromDevice.parse(head);
    }
    else toBroker(head);
  });
  device.on('end', () => edge.push(null));
  device.on('error', (error) => edge.destroy(error));
  device.on('close', () => edge.destroy());
  return edge;
}
