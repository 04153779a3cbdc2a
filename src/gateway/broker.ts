/**
 * The embedded MQTT broker (aedes, DESIGN B): devices authenticate with their id and secret and may
 * touch only their own `appliance/{deviceId}/` topics. The cloud is no client of it: what a device
 * publishes is handed to the bridge in process, and commands are published by the broker itself.
 *
 * Hardening (DESIGN J): every hook and handler runs guarded (guard.ts); a packet announcing more
 * than MAX_PACKET_BYTES is cut off as its header arrives (packet-guard.ts); a device publish is
 * acknowledged only once it is handled; and a device whose connection ends is offline, will or not.
 * aedes speaks MQTT 3.1.1; an MQTT 5 device is translated at its connection's edge (mqtt5.ts).
 */
import { once } from 'node:events';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { Aedes, type AuthenticateError, type Client, type PublishPacket, type Subscription } from 'aedes';
import { encodeConnection, MAX_PAYLOAD_BYTES } from '../device-protocol/codec.js';
import { mayPublish, maySubscribe, parseTopic, topicOf } from '../device-protocol/topics.js';
import { andThen, type Eventually } from '../eventually.js';
import { hashSecret, isDeviceId, randomId, secretMatches } from '../ids.js';
import type { DeviceRegistrations } from '../core/cache.js';
import type { Device } from '../core/model.js';
import type { Metrics } from '../metrics.js';
import type { Store } from '../store/store.js';
import { Refused, type Bridge, type Outcome } from './bridge.js';
import { answerOnce, guard, reportFault, type FaultReporting } from './guard.js';
import type { GatewayLogger } from './logger.js';
import { disconnectWith, REASON, refuseInAck, speakingMqtt5 } from './mqtt5.js';
import { limitPacketSize } from './packet-guard.js';

export interface EmbeddedBrokerOptions {
  /** 0 binds an ephemeral port. */
  port: number;
  host?: string;
  store: Pick<Store, 'getDevice'>;
  /** Checked at each publish and command, and when a device is said to have changed (see `stillRegistered`). */
  registrations: DeviceRegistrations;
  logger: GatewayLogger;
  metrics?: Pick<Metrics, 'brokerFaults'> | undefined;
  /** Where device publishes go. */
  bridge: Pick<Bridge, 'take'>;
}

/**
 * The largest remaining length of a packet (all of it but its fixed header): a payload at the
 * codec's bound plus room for the variable header (topic, packet id) or a CONNECT's fields.
 */
export const MAX_PACKET_BYTES = MAX_PAYLOAD_BYTES + 1024;

/** Compared against when the user name is no device, so that a miss costs as long as a wrong secret. */
const NO_DEVICE_HASH = hashSecret(randomId());

/** What `endSession` and `receivedBefore` use of aedes' persistence (aedes-persistence's memory one). */
interface SessionPersistence {
  /** The QoS 2 publish of that id the client sent and has not released (PUBREL) yet; rejects when there is none. */
  incomingGetPacket(client: Client, packet: Pick<PublishPacket, 'messageId'>): Promise<PublishPacket>;
  cleanSubscriptions(client: Client): Promise<void>;
  outgoingStream(client: Client): AsyncIterable<PublishPacket>;
  outgoingClearMessageId(client: Client, packet: PublishPacket): Promise<unknown>;
  cleanIncoming(client: Client): Promise<void>;
}

/** Why an older connection of a device ends, or its publish (its will, say) is refused. */
const TAKEN_OVER = 'a newer connection of the device took its session over';

/** Why a device's connection ends, or its publish is refused, once it was unregistered or given a new secret. */
const NO_LONGER_REGISTERED = 'the device is no longer registered with the secret it connected with';

/** A device connected to the broker, and the registration (its secret hash) its connection was admitted for. */
export interface ConnectedDevice {
  deviceId: string;
  registration: string;
}

/** The device a client authenticated as, and the secret (hashed) it did so with. */
interface Identity {
  deviceId: string;
  secretHash: string;
}

/** What the broker says for a device that connected, whatever it says itself. */
const ONLINE = encodeConnection({ online: true });
/** What a device's will says, for a device whose connection ended without one. */
const OFFLINE = encodeConnection({ online: false });

function refused(returnCode: 3 | 4 | 5, message: string): AuthenticateError {
  return Object.assign(new Error(message), { returnCode });
}

function isAuthenticateError(error: unknown): error is AuthenticateError {
  return error instanceof Error && 'returnCode' in error;
}

/** What a publish the bridge already took (a QoS 2 one sent again) is answered as. */
const ALREADY_TAKEN: Promise<Outcome> = Promise.resolve('handled');

/** A publish handed to the bridge, or refused before it with the reason the connection ends with. */
type Admission = { taken: Promise<Outcome> } | { refused: number; why: string };

export class EmbeddedBroker {
  /** The device each authenticated client is. */
  private readonly identities = new WeakMap<Client, Identity>();
  /** Each connected device's latest session: only it speaks for the device (an older one was taken over). */
  private readonly sessions = new Map<string, Client>();
  /** MQTT 5 connections whose session ends with them (no session expiry). */
  private readonly endingSessions = new WeakSet<Client>();
  /** Connections cut off because their registration is gone: their end says nothing of the device registered since. */
  private readonly unregistered = new WeakSet<Client>();
  /** MQTT 5 connections that start a new session to be kept (a clean start with an expiry). */
  private readonly startingOver = new WeakSet<Client>();
  /** Per connection, its last publish whose check is reading the store, until it is admitted (see inTurn). */
  private readonly admissions = new WeakMap<Client, Promise<void>>();
  private readonly reporting: FaultReporting;
  private aedes: Aedes | null = null;
  private server: Server | null = null;

  constructor(private readonly options: EmbeddedBrokerOptions) {
    this.reporting = { logger: options.logger, metrics: options.metrics };
  }

  /** Starts listening; returns the bound port. */
  async start(): Promise<number> {
    const aedes = await Aedes.createBroker({
      authenticate: (client, username, password, done) => {
        const answer = answerOnce(done);
        this.guard('authenticate', client, () => this.authenticate(client, username, password, answer), () =>
          answer(refused(3, 'the server could not check the credentials'), false),
        );
      },
      // Device publishes (and wills) are handled here, before aedes acknowledges them: a PUBACK means stored.
      authorizePublish: (client, packet, done) => {
        const answer = answerOnce(done);
        this.guard('authorizePublish', client, () => this.authorizePublish(client, packet, answer), answer);
      },
      authorizeSubscribe: (client, subscription, done) => {
        const answer = answerOnce(done);
        this.guard('authorizeSubscribe', client, () => this.authorizeSubscribe(client, subscription, answer), answer);
      },
    });
    aedes.on('client', (client) => this.guard('client', client, () => this.connected(client), () => undefined));
    aedes.on('clientDisconnect', (client) => this.guard('clientDisconnect', client, () => this.disconnected(client), () => undefined));
    this.options.registrations.onDeviceChanged((deviceId) => {
      const client = this.sessions.get(deviceId);
      if (client) this.guard('deviceChanged', client, () => this.dropIfUnregistered(client), () => undefined);
    });
    // aedes reports failures of its own persistence as 'error' (untyped in its `on`); unheard, they would end the process.
    aedes.addListener('error', (error: unknown) => reportFault(this.reporting, 'broker', {}, error));
    const server = createServer((socket) => this.guard('connection', null, () => this.accept(aedes, socket), () => socket.destroy()));
    server.listen(this.options.port, this.options.host);
    try {
      await once(server, 'listening');
    } catch (error) {
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      throw error;
    }
    // Accepting can fail later (too many open files): logged, and the server goes on listening.
    server.on('error', (error) => this.options.logger.error({ err: error }, 'MQTT server error'));
    this.aedes = aedes;
    this.server = server;
    return (server.address() as AddressInfo).port;
  }

  /** The devices connected right now, each with the secret hash its connection was admitted with. */
  connectedDevices(): ConnectedDevice[] {
    return [...this.sessions].flatMap(([deviceId, client]) => {
      const registration = this.identities.get(client)?.secretHash;
      return registration === undefined ? [] : [{ deviceId, registration }];
    });
  }

  /** Whether it is listening (for /ready). */
  listening(): boolean {
    return this.server?.listening ?? false;
  }

  /**
   * Publishes a command as the broker itself, QoS 0 (see PublishCommand); resolves once the subscribers' copies are handed on. A
   * command never reaches a connection that no longer speaks for its device (unregistered since, or
   * registered again with a new secret, perhaps for another owner): that one is cut off first.
   */
  async publish(topic: string, payload: string): Promise<void> {
    const deviceId = parseTopic(topic)?.deviceId;
    const client = deviceId === undefined ? undefined : this.sessions.get(deviceId);
    if (client) await this.dropIfUnregistered(client);
    const { aedes } = this;
    if (!aedes) throw new Error('the embedded broker is not running');
    const packet: PublishPacket = { cmd: 'publish', topic, payload: Buffer.from(payload), qos: 0, retain: false, dup: false };
    await new Promise<void>((resolve, reject) => aedes.publish(packet, (error) => (error ? reject(error) : resolve())));
  }

  /** Disconnects every client and stops listening. */
  async close(): Promise<void> {
    const { aedes, server } = this;
    this.aedes = null;
    this.server = null;
    if (aedes) await new Promise<void>((resolve) => aedes.close(() => resolve()));
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private guard(hook: string, client: Client | null, body: () => unknown, refuse: (error: Error) => void): void {
    guard(this.reporting, hook, { clientId: client?.id }, body, refuse);
  }

  /**
   * Hands a connection to aedes, through the packet size bound and the MQTT 5 edge. An MQTT 5 session
   * ends with its connection unless the device gave it an expiry: aedes keeps it as a 3.1.1 session
   * that is not clean (so that a clean start of 0 takes a kept one up, queued messages included), and
   * `disconnected` ends it. A clean start with an expiry is such a session too, emptied first
   * (`authenticate`).
   */
  private accept(aedes: Aedes, socket: Socket): void {
    let client: Client | undefined;
    const edge = speakingMqtt5(this.limited(socket), MAX_PACKET_BYTES, {
      sessionEnds: (ends) => {
        if (!client) return;
        if (ends) this.endingSessions.add(client);
        else this.endingSessions.delete(client);
      },
      startsOver: () => {
        if (client) this.startingOver.add(client);
      },
    });
    client = aedes.handle(edge);
  }

  /** The socket as aedes gets it: cut off at the first packet that announces more than MAX_PACKET_BYTES. */
  private limited(socket: Socket) {
    const from = socket.remoteAddress;
    return limitPacketSize(socket, MAX_PACKET_BYTES, (announcedAtLeast) => {
      this.options.logger.warn({ remoteAddress: from, announcedAtLeast, limit: MAX_PACKET_BYTES }, 'MQTT connection cut: a packet announced more bytes than accepted');
    });
  }

  /**
   * username = device id, password = its secret (hashed at rest, compared in constant time); the
   * client id must be the device id, so that no device can take over another's session by its id.
   */
  private async authenticate(
    client: Client,
    username: string | undefined,
    password: Buffer | undefined,
    answer: (error: AuthenticateError | null, success: boolean) => void,
  ): Promise<void> {
    let device: Device;
    try {
      device = await this.identify(client, username, password);
    } catch (error) {
      if (isAuthenticateError(error)) return answer(error, false);
      throw error;
    }
    const { deviceId } = device;
    // aedes takes the session up after authentication: a new one to be kept must find nothing of the old.
    if (this.startingOver.has(client)) await this.endSession(client);
    this.identities.set(client, { deviceId, secretHash: device.secretHash });
    // aedes ends the older connection of the same client id as this one is accepted; an MQTT 5 device there is told why.
    const older = this.sessions.get(deviceId);
    if (older && older !== client) disconnectWith(older.conn, REASON.sessionTakenOver, TAKEN_OVER);
    this.sessions.set(deviceId, client);
    answer(null, true);
  }

  private async identify(client: Client, username: string | undefined, password: Buffer | undefined): Promise<Device> {
    const secret = password?.toString('utf8') ?? '';
    const device = username !== undefined && isDeviceId(username) ? await this.options.store.getDevice(username) : undefined;
    const matches = secretMatches(secret, device?.secretHash ?? NO_DEVICE_HASH);
    if (!device || !matches) {
      this.options.logger.warn({ username, clientId: client.id }, 'MQTT connection refused: unknown device or wrong secret');
      throw refused(4, 'bad user name or password');
    }
    if (client.id !== device.deviceId) {
      this.options.logger.warn({ deviceId: device.deviceId, clientId: client.id }, 'MQTT connection refused: the client id must be the device id');
      throw refused(5, 'the client id must be the device id');
    }
    return device;
  }

  /**
   * Whether the device is still registered with the secret the client connected with. Read through
   * the lookup cache: a change made on this node or told by another is seen at once, one made by
   * another process on a SQLite file within the cache's TTL.
   */
  private stillRegistered({ deviceId, secretHash }: Identity): Eventually<boolean> {
    return andThen(this.options.registrations.getDevice(deviceId), (device) => device !== undefined && device.secretHash === secretHash);
  }

  /**
   * Cuts off a connection that no longer speaks for its device, and ends its session: what it was
   * subscribed to and what was queued for it are not for a device registered again under its id.
   */
  private async dropIfUnregistered(client: Client): Promise<void> {
    const identity = this.identities.get(client);
    if (identity === undefined || (await this.stillRegistered(identity))) return;
    this.options.logger.warn({ deviceId: identity.deviceId }, 'MQTT connection cut: the device is no longer registered with the secret it connected with');
    disconnectWith(client.conn, REASON.notAuthorized, NO_LONGER_REGISTERED);
    this.endingSessions.add(client);
    this.unregistered.add(client);
    await new Promise<void>((resolve) => client.close(() => resolve()));
  }

  /**
   * A device's publish (or will) is handed to the bridge and answered once handled. One that could
   * not be stored gets an error answer, which closes the connection without a PUBACK, so the device
   * sends it again (a negative PUBACK would end it, in MQTT 5 too). One refused is acknowledged: with
   * reason 0x83 and the problem to an MQTT 5 device, plainly to a 3.1.1 one.
   */
  private async authorizePublish(client: Client | null, packet: PublishPacket, answer: (error?: Error | null) => void): Promise<void> {
    const admitted = await (client ? this.inTurn(client, packet) : this.admit(null, packet));
    if ('refused' in admitted) {
      // An error answer ends the connection; an MQTT 5 device is told why first.
      if (client) disconnectWith(client.conn, admitted.refused, admitted.why);
      return answer(new Error(admitted.why));
    }
    const outcome = await admitted.taken;
    if (outcome === 'failed') {
      const why = 'the message could not be stored; send it again when connected again';
      if (client) disconnectWith(client.conn, REASON.unspecified, why);
      return answer(new Error(why));
    }
    // An MQTT 5 device learns of the refusal in its PUBACK or PUBREC; 3.1.1 can only acknowledge it.
    if (outcome instanceof Refused && client && packet.qos > 0) refuseInAck(client.conn, packet.messageId!, outcome.problem);
    answer(null);
  }

  /**
   * Admits a connection's publish after the ones it sent before: aedes hands over together the
   * packets it read at once, and one whose check reads the store (an expired lookup) would otherwise
   * let those sent after it reach the bridge first, and be stored before it. A check that the cached
   * lookup answers hands the publish over at once, so that the reports read together are stored together.
   */
  private inTurn(client: Client, packet: PublishPacket): Eventually<Admission> {
    const waiting = this.admissions.get(client);
    const admitted = waiting ? waiting.then(() => this.admit(client, packet)) : this.admit(client, packet);
    if (!(admitted instanceof Promise)) return admitted;
    const settled = admitted.then(
      () => undefined,
      () => undefined,
    );
    this.admissions.set(client, settled);
    void settled.then(() => {
      if (this.admissions.get(client) === settled) this.admissions.delete(client);
    });
    return admitted;
  }

  /** Checks a publish and hands it to the bridge: what the bridge took, or why the publish is refused. */
  private admit(client: Client | null, packet: PublishPacket): Eventually<Admission> {
    // client is null for the broker's own publications (wills of clients of a dead broker instance): a device's, as it left them.
    if (!client) return this.handOver(packet);
    const identity = this.identities.get(client);
    if (identity === undefined || !mayPublish(identity.deviceId, packet.topic)) {
      this.options.logger.warn({ clientId: client.id, topic: packet.topic }, 'MQTT publish refused: outside the topics of the device');
      return { refused: REASON.notAuthorized, why: `not authorized to publish to ${packet.topic}` };
    }
    // Its will included: the device has connected again, and the new session speaks for it.
    if (this.sessions.get(identity.deviceId) !== client) return { refused: REASON.sessionTakenOver, why: TAKEN_OVER };
    // A QoS 2 publish sent again because its PUBREC was lost, to the session that holds the first copy
    // until its PUBREL: that copy was taken, and aedes answers this one with a PUBREC alone. Taken
    // again, its push would be recorded twice, where QoS 2 means once.
    if (packet.qos === 2) {
      return this.receivedBefore(client, packet).then((received) => (received ? { taken: ALREADY_TAKEN } : this.registeredThenHandOver(client, identity, packet)));
    }
    return this.registeredThenHandOver(client, identity, packet);
  }

  /** Whether the client's session holds a QoS 2 publish of this id that it has not released yet. */
  private receivedBefore(client: Client, packet: PublishPacket): Promise<boolean> {
    // aedes has its persistence on the instance, untyped (see endSession).
    if (!this.aedes) return Promise.resolve(false);
    const { persistence } = this.aedes as unknown as { persistence: SessionPersistence };
    return persistence.incomingGetPacket(client, packet).then(
      () => true,
      () => false,
    );
  }

  /** Hands the publish to the bridge while the device is still registered with the secret the client connected with. */
  private registeredThenHandOver(client: Client, identity: Identity, packet: PublishPacket): Eventually<Admission> {
    return andThen(this.stillRegistered(identity), (registered) => {
      if (registered) return this.handOver(packet, identity.secretHash);
      this.options.logger.warn({ deviceId: identity.deviceId, topic: packet.topic }, 'MQTT publish refused: the device is no longer registered with the secret it connected with');
      this.endingSessions.add(client);
      this.unregistered.add(client);
      return { refused: REASON.notAuthorized, why: NO_LONGER_REGISTERED };
    });
  }

  /** `registration`: the secret hash the device connected with, which what it sends is stored for. */
  private handOver(packet: PublishPacket, registration?: string): Admission {
    // A live publish, never a replay: a retained flag only asks the broker to keep it.
    const taken = this.options.bridge.take(packet.topic, packet.payload, false, registration);
    // Refused while shutting down: no PUBACK, so the device sends it again to the next instance.
    if (!taken) return { refused: REASON.serverShuttingDown, why: 'the gateway is shutting down; send the message again when connected again' };
    return { taken };
  }

  private authorizeSubscribe(client: Client, subscription: Subscription, answer: (error: Error | null, subscription?: Subscription | null) => void): void {
    const deviceId = this.identities.get(client)?.deviceId;
    if (deviceId !== undefined && maySubscribe(deviceId, subscription.topic)) return answer(null, subscription);
    this.options.logger.warn({ clientId: client.id, topic: subscription.topic }, 'MQTT subscription refused: a device may subscribe only under its own appliance/{deviceId}/');
    // A null subscription is refused in the SUBACK (0x80) without dropping the connection.
    answer(null, null);
  }

  /**
   * An MQTT 5 session with no expiry ends with its connection, and one that starts clean to be kept
   * starts empty: what aedes keeps of a 3.1.1 session that is not clean goes, as its connect does for a
   * clean one (its subscriptions, the messages queued for it, the QoS 2 ids it received).
   */
  private async endSession(client: Client): Promise<void> {
    // aedes has its persistence (its own memory one) on the instance, untyped; gone once the broker closed.
    if (!this.aedes) return;
    const { persistence } = this.aedes as unknown as { persistence: SessionPersistence };
    await persistence.cleanSubscriptions(client);
    for await (const packet of persistence.outgoingStream(client)) await persistence.outgoingClearMessageId(client, packet);
    await persistence.cleanIncoming(client);
  }

  /**
   * A device is online once it connects (DESIGN D: "offline until it connects"), whether or not it
   * then says so on its connection topic; through the bridge, so before anything it publishes.
   */
  private connected(client: Client): void {
    const identity = this.identities.get(client);
    if (identity === undefined || this.sessions.get(identity.deviceId) !== client) return;
    // For the registration it connected as: the id may have been registered again since.
    void this.options.bridge.take(topicOf(identity.deviceId, 'connection'), ONLINE, false, identity.secretHash);
  }

  /**
   * A device whose latest session ended is offline, whatever its will said or whether it had one (a
   * keep-alive timeout, a destroyed socket); a session that a newer one took over, or that was cut off
   * as no longer registered, changes nothing.
   */
  private disconnected(client: Client): void {
    const identity = this.identities.get(client);
    if (identity === undefined || this.sessions.get(identity.deviceId) !== client) return;
    const { deviceId, secretHash } = identity;
    this.sessions.delete(deviceId);
    if (this.endingSessions.has(client)) {
      this.endSession(client).catch((error: unknown) => reportFault(this.reporting, 'endSession', { clientId: client.id }, error));
    }
    // Its registration is known to be gone: no flag to store.
    if (this.unregistered.has(client)) return;
    // Through the bridge, in order after what the device sent before; the bridge logs a failure. For
    // the registration it connected as, not one registered under its id since (a virtual one is online).
    void this.options.bridge.take(topicOf(deviceId, 'connection'), OFFLINE, false, secretHash);
  }
}
