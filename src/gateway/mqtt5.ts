/**
 * MQTT 5 devices on the embedded broker (DESIGN B: MQTT 3.1.1/5). aedes speaks 3.1.1 only, so a
 * connection whose CONNECT says 5 is translated at its edge, packet by packet: what the device sends
 * reaches aedes as 3.1.1, and what aedes sends goes back as 5. Everything the broker decides
 * (authentication, the topics a device may use, a PUBACK only once stored) stays where it is; the
 * edge maps the codes and leaves out what 3.1.1 cannot carry. A 3.1.1 or 3.1 connection passes as
 * it came. The CONNACK says what the broker does not take (topic aliases, subscription identifiers,
 * shared subscriptions) and its packet size bound; a device that uses one anyway is refused with
 * the reason code MQTT 5 gives for it. A report the broker refuses (it does not fit the profile) is
 * acknowledged with 0x83 and the problem, where 3.1.1 can only acknowledge it.
 */
import { Duplex } from 'node:stream';
import mqttPacket, { type Packet } from 'mqtt-packet';

const V4 = { protocolVersion: 4 } as const;
const V5 = { protocolVersion: 5 } as const;

/** MQTT 5 reason codes the edge sends (MQTT 5.0, 2.4). */
export const REASON = {
  success: 0x00,
  disconnectWithWill: 0x04,
  unspecified: 0x80,
  protocolError: 0x82,
  implementationSpecificError: 0x83,
  unsupportedProtocolVersion: 0x84,
  clientIdNotValid: 0x85,
  badUserNameOrPassword: 0x86,
  notAuthorized: 0x87,
  serverUnavailable: 0x88,
  serverShuttingDown: 0x8b,
  badAuthenticationMethod: 0x8c,
  sessionTakenOver: 0x8e,
  topicAliasInvalid: 0x94,
  quotaExceeded: 0x97,
  sharedSubscriptionsNotSupported: 0x9e,
  subscriptionIdentifiersNotSupported: 0xa1,
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

/** Publishes queued for a device under its Receive Maximum past which it is disconnected. */
const QUEUE_LIMIT = 1000;

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

/** What the edge does with one packet: what goes on to the broker and to the device, and whether the connection ends. */
export interface Translated {
  toBroker: Packet[];
  toDevice: Packet[];
  close?: boolean;
  /** Set when the session's fate changed: true when it ends with the connection, as aedes' clean session does. */
  sessionEnds?: boolean;
  /** Set on a clean start with an expiry: the broker empties what it kept of the session before taking it up. */
  startsOver?: boolean;
}

type PublishPacket = Extract<Packet, { cmd: 'publish' }>;

/**
 * One MQTT 5 connection's translation, both ways. Pure: packets in, packets out. It keeps what MQTT 5
 * asks of a server that 3.1.1 has no word for:
 * - the device's Receive Maximum: QoS 1 and 2 publishes beyond it wait here until one is acknowledged;
 * - its Maximum Packet Size: a reason string that would pass it is left out, and a publish that
 *   would pass it is not sent (acknowledged to aedes here, as MQTT 5 has it discarded);
 * - QoS 2 flows that end early (the device's PUBREC of 0x80 or more, a refused publish, a discarded
 *   one): the PUBREL and PUBCOMP that 3.1.1 still exchanges are answered here;
 * - how many topics each UNSUBSCRIBE named (an UNSUBACK has a code for each), which SUBSCRIBE topics
 *   were shared ones, and whether the CONNACK was a success (only then may a DISCONNECT be sent).
 */
export class Mqtt5Translation {
  readonly #unsubscribed = new Map<number, number>();
  /** Per SUBSCRIBE, which of its topics were `$share/…`, refused with 0x9E rather than 0x87. */
  readonly #shared = new Map<number, boolean[]>();
  /** The problem of each publish of the device that the broker refused, by packet id, until its PUBACK or PUBREC goes out. */
  readonly #refused = new Map<number, string>();
  /** Publishes to the device acknowledged by neither side yet, by packet id (its Receive Maximum counts them). */
  readonly #inFlight = new Set<number>();
  /** Publishes to the device waiting for room under its Receive Maximum. */
  readonly #queued: PublishPacket[] = [];
  /** QoS 2 flows to the device that ended early: aedes' PUBREL for them is answered here. */
  readonly #endedToDevice = new Set<number>();
  /** QoS 2 flows of the device refused with a PUBREC of 0x83: aedes' PUBCOMP for them is dropped here. */
  readonly #endedFromDevice = new Set<number>();
  #connectSeen = false;
  #connected = false;
  #receiveMaximum = 65_535;
  #maximumPacketSize: number | undefined;
  /** Whether the device lets an acknowledgement carry a reason string (MQTT 5, 3.1.2.11.7). */
  #problemsWanted = true;
  #sessionEnds = true;
  #noExpiryAtConnect = true;
  /** Why the broker is about to end the connection, for the DISCONNECT that tells the device. */
  #leaving: Packet | null = null;

  constructor(private readonly maximumPacketSize: number) {}

  /** The broker refused the device's publish `messageId`: its PUBACK or PUBREC says so (0x83) and why. */
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
    return packet && this.#fit(packet);
  }

  /** A packet of the device (MQTT 5), as the broker takes it (3.1.1). */
  fromDevice(packet: Packet): Translated {
    switch (packet.cmd) {
      case 'connect':
        return this.#connect(packet);
      case 'publish':
        if (packet.properties?.topicAlias !== undefined) return this.#disconnect(REASON.topicAliasInvalid);
        return pass({ cmd: 'publish', topic: packet.topic, payload: packet.payload, qos: packet.qos, retain: packet.retain, dup: packet.dup, messageId: packet.messageId });
      case 'puback':
      case 'pubcomp':
        return this.#acknowledged(packet.messageId!, { cmd: packet.cmd, messageId: packet.messageId });
      case 'pubrec':
        // 0x80 or more ends the flow at the device (MQTT 5, 4.3.3): aedes' PUBREL is answered here.
        if ((packet.reasonCode ?? 0) < 0x80) return pass({ cmd: 'pubrec', messageId: packet.messageId });
        this.#endedToDevice.add(packet.messageId!);
        return this.#acknowledged(packet.messageId!, { cmd: 'pubrec', messageId: packet.messageId });
      case 'pubrel':
        return pass({ cmd: 'pubrel', messageId: packet.messageId });
      case 'subscribe':
        if (packet.subscriptions.length === 0) return this.#disconnect(REASON.protocolError);
        if (packet.properties?.subscriptionIdentifier !== undefined) return this.#disconnect(REASON.subscriptionIdentifiersNotSupported);
        this.#shared.set(packet.messageId!, packet.subscriptions.map(({ topic }) => topic.startsWith('$share/')));
        return pass({ cmd: 'subscribe', messageId: packet.messageId, subscriptions: packet.subscriptions.map(({ topic, qos }) => ({ topic, qos })) });
      case 'unsubscribe':
        if (packet.unsubscriptions.length === 0) return this.#disconnect(REASON.protocolError);
        this.#unsubscribed.set(packet.messageId!, packet.unsubscriptions.length);
        return pass({ cmd: 'unsubscribe', messageId: packet.messageId, unsubscriptions: packet.unsubscriptions });
      case 'pingreq':
        return pass({ cmd: 'pingreq' });
      case 'disconnect': {
        const expiry = packet.properties?.sessionExpiryInterval;
        // A session that had no expiry cannot be given one as it ends (MQTT 5, 3.14.2.2.2).
        if (expiry !== undefined && expiry > 0 && this.#noExpiryAtConnect) return this.#disconnect(REASON.protocolError);
        const session = expiry === undefined ? {} : { sessionEnds: (this.#sessionEnds = expiry === 0) };
        // Only a normal disconnection (0x00) withholds the will (MQTT 5, 3.1.2.5): any other ends the
        // connection as if dropped, which is when aedes sends it.
        if ((packet.reasonCode ?? 0) !== 0) return { toBroker: [], toDevice: [], close: true, ...session };
        return { toBroker: [{ cmd: 'disconnect' }], toDevice: [], ...session };
      }
      default:
        // AUTH (no method was agreed on) and what only a server sends.
        return this.#disconnect(REASON.protocolError);
    }
  }

  /** A packet of the broker (3.1.1), as the device takes it (MQTT 5). */
  fromBroker(packet: Packet): Translated {
    switch (packet.cmd) {
      case 'connack': {
        const reasonCode = CONNACK_REASONS[packet.returnCode ?? 0] ?? REASON.unspecified;
        this.#connected = reasonCode === REASON.success;
        const properties = this.#connected ? { maximumPacketSize: this.maximumPacketSize, subscriptionIdentifiersAvailable: false, sharedSubscriptionAvailable: false } : undefined;
        const connack = this.#fit({ cmd: 'connack', sessionPresent: packet.sessionPresent, reasonCode, ...(properties ? { properties } : {}) });
        return { toBroker: [], toDevice: connack ? [connack] : [] };
      }
      case 'publish': {
        const publish: PublishPacket = { cmd: 'publish', topic: packet.topic, payload: packet.payload, qos: packet.qos, retain: packet.retain, dup: packet.dup, messageId: packet.messageId };
        if (publish.qos > 0 && this.#inFlight.size >= this.#receiveMaximum) {
          // A device that takes none of them in turn is let go rather than queued for without bound.
          if (this.#queued.length >= QUEUE_LIMIT) return this.#disconnect(REASON.quotaExceeded);
          this.#queued.push(publish);
          return { toBroker: [], toDevice: [] };
        }
        return this.#send(publish);
      }
      case 'puback':
      case 'pubrec': {
        const problem = this.#refused.get(packet.messageId!);
        if (problem === undefined) return toDevice({ cmd: packet.cmd, messageId: packet.messageId, reasonCode: REASON.success });
        this.#refused.delete(packet.messageId!);
        const refusal = this.#fit({ cmd: packet.cmd, messageId: packet.messageId, reasonCode: REASON.implementationSpecificError, ...(this.#problemsWanted ? { properties: { reasonString: problem } } : {}) });
        if (packet.cmd === 'puback') return { toBroker: [], toDevice: refusal ? [refusal] : [] };
        // A PUBREC of 0x83 ends the device's QoS 2 flow: aedes is sent the PUBREL it will not send.
        this.#endedFromDevice.add(packet.messageId!);
        return { toBroker: [{ cmd: 'pubrel', messageId: packet.messageId }], toDevice: refusal ? [refusal] : [] };
      }
      case 'pubrel':
        if (!this.#endedToDevice.delete(packet.messageId!)) return toDevice({ cmd: 'pubrel', messageId: packet.messageId, reasonCode: REASON.success });
        return { toBroker: [{ cmd: 'pubcomp', messageId: packet.messageId }], toDevice: [] };
      case 'pubcomp':
        if (this.#endedFromDevice.delete(packet.messageId!)) return { toBroker: [], toDevice: [] };
        return toDevice({ cmd: 'pubcomp', messageId: packet.messageId, reasonCode: REASON.success });
      case 'suback': {
        const shared = this.#shared.get(packet.messageId!) ?? [];
        this.#shared.delete(packet.messageId!);
        const granted = packet.granted.map((code, i) => (code !== SUBACK_FAILURE ? code : shared[i] ? REASON.sharedSubscriptionsNotSupported : REASON.notAuthorized));
        return toDevice({ cmd: 'suback', messageId: packet.messageId!, granted });
      }
      case 'unsuback': {
        const count = this.#unsubscribed.get(packet.messageId!) ?? 1;
        this.#unsubscribed.delete(packet.messageId!);
        return toDevice({ cmd: 'unsuback', messageId: packet.messageId!, granted: new Array<number>(count).fill(REASON.success) });
      }
      default:
        return toDevice(packet);
    }
  }

  #connect(packet: Extract<Packet, { cmd: 'connect' }>): Translated {
    // A second CONNECT is a protocol error (MQTT 5, 3.1.0-2), and must not bring a second CONNACK.
    if (this.#connectSeen) return this.#disconnect(REASON.protocolError);
    this.#connectSeen = true;
    const properties = packet.properties ?? {};
    if (properties.authenticationMethod !== undefined) return this.#refuseConnect(REASON.badAuthenticationMethod);
    // Zero is a protocol error for both (MQTT 5, 3.1.2.11.3, 3.1.2.11.4).
    if (properties.receiveMaximum === 0 || properties.maximumPacketSize === 0) return this.#refuseConnect(REASON.protocolError);
    this.#problemsWanted = properties.requestProblemInformation !== false;
    this.#receiveMaximum = properties.receiveMaximum ?? 65_535;
    this.#maximumPacketSize = properties.maximumPacketSize;
    this.#noExpiryAtConnect = !((properties.sessionExpiryInterval ?? 0) > 0);
    this.#sessionEnds = this.#noExpiryAtConnect;
    const { will } = packet;
    const cleanStart = packet.clean !== false;
    // A clean start that is to be kept cannot be 3.1.1's clean session, which ends with the connection.
    const startsOver = cleanStart && !this.#noExpiryAtConnect;
    return {
      toBroker: [
        {
          cmd: 'connect',
          protocolId: 'MQTT',
          protocolVersion: 4,
          // Clean start as 3.1.1's clean session, so that a kept session is taken up, but for a clean
          // start with an expiry: a session that is not clean, which the broker empties first
          // (startsOver). The broker ends a session with no expiry when its connection ends (sessionEnds).
          clean: cleanStart && !startsOver,
          clientId: packet.clientId,
          keepalive: packet.keepalive,
          // 3.1.1 has no password without a user name; the broker refuses such a device either way.
          ...(packet.username !== undefined ? { username: packet.username, password: packet.password } : {}),
          ...(will ? { will: { topic: will.topic, payload: will.payload, qos: will.qos, retain: will.retain } } : {}),
        },
      ],
      toDevice: [],
      sessionEnds: this.#sessionEnds,
      ...(startsOver ? { startsOver } : {}),
    };
  }

  /** A publish to the device: sent and counted in flight, or, past its Maximum Packet Size, acknowledged to aedes here instead. */
  #send(publish: PublishPacket): Translated {
    const fitted = this.#fit(publish);
    if (fitted) {
      if (publish.qos > 0) this.#inFlight.add(publish.messageId!);
      return { toBroker: [], toDevice: [fitted] };
    }
    if (publish.qos === 0) return { toBroker: [], toDevice: [] };
    if (publish.qos === 2) this.#endedToDevice.add(publish.messageId!);
    return { toBroker: [{ cmd: publish.qos === 1 ? 'puback' : 'pubrec', messageId: publish.messageId }], toDevice: [] };
  }

  /** The device acknowledged publish `messageId` (`ack`, for aedes): what waited under its Receive Maximum may go. */
  #acknowledged(messageId: number, ack: Packet): Translated {
    this.#inFlight.delete(messageId);
    const done: Translated = { toBroker: [ack], toDevice: [] };
    while (this.#queued.length && this.#inFlight.size < this.#receiveMaximum) {
      const next = this.#send(this.#queued.shift()!);
      done.toBroker.push(...next.toBroker);
      done.toDevice.push(...next.toDevice);
    }
    return done;
  }

  /**
   * The packet as the device can take it (MQTT 5, 3.1.2.11.4): whole when within its Maximum Packet
   * Size, without its properties (a reason string) when that is enough, else null (not sent).
   */
  #fit(packet: Packet): Packet | null {
    const limit = this.#maximumPacketSize;
    if (limit === undefined || mqttPacket.generate(packet, V5).length <= limit) return packet;
    if (packet.cmd === 'publish' || !('properties' in packet) || !packet.properties) return null;
    const bare = { ...packet, properties: undefined } as Packet;
    return mqttPacket.generate(bare, V5).length <= limit ? bare : null;
  }

  #refuseConnect(reasonCode: number): Translated {
    return { toBroker: [], toDevice: [{ cmd: 'connack', sessionPresent: false, reasonCode }], close: true };
  }

  /** MQTT 5 lets the server send a DISCONNECT only after a successful CONNACK; before it, the connection just ends. */
  #disconnect(reasonCode: number): Translated {
    const disconnect = this.#connected ? this.#fit({ cmd: 'disconnect', reasonCode }) : null;
    return { toBroker: [], toDevice: disconnect ? [disconnect] : [], close: true };
  }
}

function pass(packet: Packet): Translated {
  return { toBroker: [packet], toDevice: [] };
}

function toDevice(packet: Packet): Translated {
  return { toBroker: [], toDevice: [packet] };
}

/** The translation of each MQTT 5 connection, by the stream aedes holds for it (its client's `conn`). */
const translations = new WeakMap<object, Mqtt5Translation>();

/**
 * Tells an MQTT 5 device, in its PUBACK or PUBREC, that its publish `messageId` was refused and why;
 * nothing for a 3.1.1 device, whose acknowledgement cannot say it.
 */
export function refuseInAck(stream: object, messageId: number, problem: string): void {
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

/** What the broker does with an MQTT 5 connection's session, told by the edge. */
export interface SessionHandling {
  /** true: the session ends with the connection (no expiry); false: it is kept. Told at the CONNECT and at a DISCONNECT that changes it. */
  sessionEnds(ends: boolean): void;
  /** The CONNECT asks for a new session that is to be kept: what was kept of the old one goes first. */
  startsOver(): void;
}

/**
 * The device's stream as aedes gets it: as it came for 3.1.1, translated for MQTT 5 (decided by the
 * first CONNECT). aedes is held back, as a socket would hold it, while the device has not taken
 * what was written to it; never for the device's Receive Maximum, which holds back publishes only
 * (a PINGRESP or a PUBREL must still go out). Ends the device's stream on a malformed MQTT 5 packet
 * or a refusal.
 */
export function speakingMqtt5(device: Duplex, maximumPacketSize: number, session: SessionHandling): Duplex {
  let mode: 'detect' | 'as-is' | 'mqtt5' = 'detect';
  let head: Buffer | null = Buffer.alloc(0);
  const translation = new Mqtt5Translation(maximumPacketSize);
  const fromDevice = mqttPacket.parser(V5);
  const fromBroker = mqttPacket.parser(V4);
  /** aedes' write waiting for the device to take what was written, or for room under its Receive Maximum. */
  let held: (() => void) | null = null;
  let deviceFull = false;
  const release = () => {
    if (!held || deviceFull) return;
    const callback = held;
    held = null;
    callback();
  };
  const toDevice = (packet: Packet) => {
    if (!device.write(mqttPacket.generate(packet, V5))) deviceFull = true;
  };
  const fromAedes = (bytes: Buffer, callback: () => void) => {
    held = callback;
    fromBroker.parse(bytes);
    release();
  };
  const edge = new Duplex({
    allowHalfOpen: false,
    read() {
      device.resume();
    },
    write(chunk: Buffer, _encoding, callback) {
      if (mode === 'mqtt5') fromAedes(chunk, callback);
      else device.write(chunk, callback);
    },
    // mqtt-packet writes a packet in pieces within one cork: they stay one write to the socket.
    writev(chunks: { chunk: Buffer }[], callback) {
      const bytes = Buffer.concat(chunks.map(({ chunk }) => chunk));
      if (mode === 'mqtt5') fromAedes(bytes, callback);
      else device.write(bytes, callback);
    },
    final(callback) {
      device.end(callback);
    },
    destroy(error, callback) {
      const farewell = translation.farewell();
      if (farewell && device.writable) {
        device.end(mqttPacket.generate(farewell, V5));
        setTimeout(() => device.destroy(), FAREWELL_MS).unref();
      } else device.destroy();
      callback(error);
    },
  });
  device.on('drain', () => {
    deviceFull = false;
    release();
  });
  const toBroker = (bytes: Buffer) => {
    // The device waits while aedes has not read what it has.
    if (!edge.push(bytes)) device.pause();
  };
  // What came after the packet that ended the connection, in the same bytes, goes nowhere.
  let closing = false;
  const apply = ({ toBroker: forward, toDevice: answer, close, sessionEnds, startsOver }: Translated) => {
    // Before the CONNECT goes on: the broker empties the old session while aedes authenticates it.
    if (startsOver) session.startsOver();
    for (const p of forward) toBroker(mqttPacket.generate(p, V4));
    for (const p of answer) toDevice(p);
    if (sessionEnds !== undefined) session.sessionEnds(sessionEnds);
    if (close) {
      closing = true;
      device.end(() => edge.destroy());
    }
  };
  // A packet the parser took that 3.1.1 cannot say throws when generated: the connection ends, as for
  // a malformed packet, and the process goes on.
  fromDevice.on('packet', (packet: Packet) => {
    if (closing) return;
    try {
      apply(translation.fromDevice(packet));
    } catch {
      closing = true;
      edge.destroy();
    }
  });
  fromDevice.on('error', () => edge.destroy());
  fromBroker.on('packet', (packet: Packet) => {
    if (closing) return;
    try {
      apply(translation.fromBroker(packet));
    } catch (error) {
      closing = true;
      edge.destroy(error as Error);
    }
  });
  fromBroker.on('error', (error: Error) => edge.destroy(error));
  device.on('data', (chunk: Buffer) => {
    if (mode === 'as-is') return toBroker(chunk);
    if (mode === 'mqtt5') return void fromDevice.parse(chunk);
    const bytes: Buffer = Buffer.concat([head!, chunk]);
    const level = connectProtocolLevel(bytes);
    if (level === undefined) {
      head = bytes;
      return;
    }
    head = null;
    mode = level === 5 ? 'mqtt5' : 'as-is';
    if (mode === 'as-is') return toBroker(bytes);
    translations.set(edge, translation);
    fromDevice.parse(bytes);
  });
  device.on('end', () => edge.push(null));
  device.on('error', (error) => edge.destroy(error));
  device.on('close', () => edge.destroy());
  return edge;
}
