/**
 * The cloud's side of the broker (DESIGN B): the bridge hands what devices send to Devices. With the
 * embedded broker it takes each device publish in process, before the broker acknowledges it (see
 * broker.ts); with an external broker, MQTT connections of the cloud's consume it (`consumeFrom`):
 * what is stored (reports, pushes, connection flags) on the deployment's one persistent session, by
 * one node at a time (device-stream.ts); command results on a connection of each node's own, which
 * also carries the commands the channel publishes.
 *
 * Either way a QoS 1 message is acknowledged only once it is handled (DESIGN J): stored, or refused
 * and counted. One that could not be handled (the store failed) is not acknowledged, and comes again.
 *
 * Command results are consumed by every node (per-node reply correlation): only the node that
 * published a command holds its commandId, and the others ignore results they do not know. They come
 * on a connection of their own, as every node takes them; the stored kinds are taken by one node at a
 * time. A result is handled in its device's turn, after what the device sent before it: a control
 * waits for its answer without the device's status lock (Devices.control), so those are stored meanwhile.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type MqttClient } from 'mqtt';
import { DeviceInputRefused, DeviceNotRegistered, StreamLost } from '../core/errors.js';
import { KeyedLock } from '../core/lock.js';
import { decodeCommandResult, decodeConnection, decodePush, decodeReport, type CommandResult } from '../device-protocol/codec.js';
import { parseTopic, type DeviceTopic } from '../device-protocol/topics.js';
import { ApiError } from '../errors.js';
import { randomId } from '../ids.js';
import type { Metrics } from '../metrics.js';
import { answerOnce, guard, type FaultReporting } from './guard.js';
import type { GatewayLogger } from './logger.js';

/**
 * What the bridge asks of Devices. `consuming`, when given, says whether this node still consumes
 * the device stream the message came on: once it does not, nothing is stored (StreamLost).
 */
export interface DeviceSink {
  /**
   * Per report in order, what became of it: a refusal (DeviceInputRefused) or anything else once
   * stored; stored only on the registration whose secret hash is `registration`, when given.
   */
  reports(deviceId: string, reports: unknown[], registration?: string, consuming?: () => boolean): Promise<unknown[]>;
  /** Recorded only for the registration whose secret hash is `registration`, when given. */
  push(deviceId: string, pushCode: unknown, registration?: string, consuming?: () => boolean): Promise<void>;
  /** Changed only on the registration whose secret hash is `registration`, when given. */
  setConnection(deviceId: string, online: boolean, registration?: string, consuming?: () => boolean): Promise<void>;
  /** Marks every real device offline; how many were online. */
  setRealDevicesOffline(): Promise<number>;
}

/** Where command results go (the command channel). */
export interface ResultSink {
  settle(deviceId: string, result: CommandResult): boolean;
  /** An answer to the command that does not fit the contract (DESIGN B): the command fails with it. */
  unfit(deviceId: string, commandId: string, problem: string): boolean;
  /** The device went offline: its commands waiting for an answer will get none. */
  offline(deviceId: string): void;
}

export interface ServiceConnectionOptions {
  url: string;
  username?: string;
  password?: string;
  /** `appliance-cloud:…`: the `:` keeps it out of the device id alphabet, so no device can take its session over. */
  clientId: string;
  /**
   * Given, the session is kept by the broker across reconnections and for this long after the
   * connection ends: what it sent and got no acknowledgement for, it sends again to the next
   * connection under the same client id, before what it queued meanwhile. Otherwise the session is clean.
   */
  sessionExpiryS?: number;
  connectTimeoutMs?: number;
  logger: GatewayLogger;
}

/** The URL without credentials, for logs and errors. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return '(an unparsable URL)';
  }
}

type HeldMessage = Parameters<MqttClient['handleMessage']>;

/** Per connection, the messages that came before its consumer (see connectService). */
const held = new WeakMap<MqttClient, HeldMessage[]>();

/**
 * Connects a client of the cloud's over MQTT 5 (whose session expiry and reason codes it uses), with
 * automatic reconnection (mqtt.js then resubscribes by itself when the session is new). Fails when
 * the first connection is refused or does not come in time.
 */
export async function connectService(options: ServiceConnectionOptions): Promise<MqttClient> {
  const timeoutMs = options.connectTimeoutMs ?? 10_000;
  const client = connect(options.url, {
    clientId: options.clientId,
    clean: options.sessionExpiryS === undefined,
    protocolVersion: 5,
    ...(options.sessionExpiryS === undefined ? {} : { properties: { sessionExpiryInterval: options.sessionExpiryS } }),
    reconnectPeriod: 1000,
    connectTimeout: timeoutMs,
    // A command published while this connection is down fails at once (2209), not sent on reconnect after its control ended.
    queueQoSZero: false,
    ...(options.username === undefined ? {} : { username: options.username }),
    ...(options.password === undefined ? {} : { password: options.password }),
  });
  // What a persistent session brings back comes right after CONNACK, before consumeFrom is attached;
  // mqtt.js would acknowledge it unhandled. It is held, unacknowledged, for the consumer.
  const early: HeldMessage[] = [];
  held.set(client, early);
  client.handleMessage = (packet, callback) => void early.push([packet, callback]);
  const where = redactUrl(options.url);
  try {
    await new Promise<void>((resolve, reject) => {
      const settle = (error?: Error) => {
        clearTimeout(timer);
        client.off('connect', onConnect);
        client.off('error', onError);
        if (error) reject(error);
        else resolve();
      };
      const onConnect = () => settle();
      const onError = (error: Error) => settle(new Error(`MQTT broker ${where} refused the connection: ${error.message}`));
      const timer = setTimeout(() => settle(new Error(`MQTT broker ${where} did not accept a connection within ${timeoutMs} ms`)), timeoutMs);
      client.on('connect', onConnect);
      client.on('error', onError);
    });
  } catch (error) {
    await client.endAsync(true);
    throw error;
  }
  // Later errors and drops are logged; mqtt.js keeps reconnecting and `connected` says how it goes.
  const { logger } = options;
  client.on('error', (error) => logger.error({ broker: where, err: error }, 'MQTT connection error'));
  client.on('offline', () => logger.warn({ broker: where }, 'MQTT connection lost; reconnecting'));
  client.on('connect', () => logger.info({ broker: where }, 'MQTT connection re-established'));
  return client;
}

/** A device message that does not fit the contract or the profile: logged, counted, never stored; and why. */
export class Refused {
  constructor(readonly problem: string) {}
}

/**
 * What became of a device message: `handled` when it was stored, or Refused (both may be
 * acknowledged); `failed` when it could not be handled (the store failed): it must not be acknowledged.
 */
export type Outcome = 'handled' | 'failed' | Refused;

const HANDLED: Promise<Outcome> = Promise.resolve('handled');

export interface BridgeDeps {
  devices: DeviceSink;
  results: ResultSink;
  logger: GatewayLogger;
  metrics?: Pick<Metrics, 'reportsRejected' | 'reportsFailed'> | undefined;
}

/**
 * Hands device → cloud messages to Devices, whichever broker they come through; `stop()` resolves
 * once every message taken is handled.
 */
export class Bridge {
  private stopping = false;
  /** Per device, messages are handled one at a time in arrival order; devices run in parallel. */
  private readonly order = new KeyedLock();
  /**
   * Per device, the reports taken since its last message began to be handled, handled together when
   * their turn comes: what a device sends while its last reports are being stored shares one write,
   * when admitted for the same registration.
   */
  private readonly waiting = new Map<string, { payloads: Buffer[]; from: Source; handled: Promise<Outcome[]> }>();
  private readonly inFlight = new Set<Promise<Outcome>>();

  constructor(private readonly deps: BridgeDeps) {}

  /**
   * Takes one message; the promise settles with its outcome once it is handled and never rejects.
   * null once the bridge is stopping: the message is not taken and must not be acknowledged.
   * `retained` is for a retained message replayed to a new subscription, not a device's live publish.
   * `registration` is the secret hash the device's connection was admitted with (the embedded
   * broker's): its reports, pushes and connection flags are stored on that registration only, else
   * dropped as from a device not registered. Without it, the registration known when the message is handled.
   * `consuming` is the device stream's (see DeviceSink): a message handled after it turned false is not stored.
   */
  take(topic: string, payload: Buffer | string, retained: boolean, registration?: string, consuming?: () => boolean): Promise<Outcome> | null {
    if (this.stopping) return null;
    const parsed = parseTopic(topic);
    const bytes = typeof payload === 'string' ? Buffer.from(payload) : payload;
    // A zero-length payload is how MQTT deletes a retained message: nothing to consume.
    if (!parsed || bytes.length === 0) return HANDLED;
    // A retained report or push is an old message replayed; only the connection flag is meant to be kept.
    if (retained && parsed.kind !== 'connection') return HANDLED;
    // The device's commands fail at once (1222), not after what it sent before is stored. A retained
    // one replays a flag older than any command.
    if (parsed.kind === 'connection' && !retained) {
      const connection = decodeConnection(bytes);
      if (connection.ok && !connection.value.online) this.deps.results.offline(parsed.deviceId);
    }
    let work: Promise<Outcome>;
    const from: Source = { registration, consuming };
    if (parsed.kind === 'state') work = this.queueReport(parsed, bytes, from);
    else {
      // A report taken after this message is handled after it: no earlier batch may take it.
      this.waiting.delete(parsed.deviceId);
      // A result too waits for what the device sent before it, which Devices stores while the control waits.
      work = this.order.run(parsed.deviceId, () => (parsed.kind === 'command/result' ? this.settleInTurn(parsed, bytes) : this.handle(parsed, bytes, from)));
    }
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
    return work;
  }

  /** Takes no more messages, then waits for those taken. */
  async stop(): Promise<void> {
    this.stopping = true;
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }

  /**
   * A result in the device's turn. The control it answers takes the device's status lock in the same
   * turn of the event loop (Devices.control), so the device's next message, handled from the next
   * turn on, is stored after the control's change, as it was sent after the result.
   */
  private async settleInTurn(topic: DeviceTopic, payload: Buffer): Promise<Outcome> {
    const outcome = this.settle(topic, payload);
    await new Promise<void>((resolve) => setImmediate(resolve));
    return outcome;
  }

  private settle(topic: DeviceTopic, payload: Buffer): Outcome {
    try {
      const result = decodeCommandResult(payload);
      if (!result.ok) {
        if ('commandId' in result) this.deps.results.unfit(topic.deviceId, result.commandId, result.problem);
        return this.reject(topic, result.problem);
      }
      if (!this.deps.results.settle(topic.deviceId, result.value)) {
        this.deps.logger.debug({ deviceId: topic.deviceId, commandId: result.value.commandId }, 'Command result for no command of this node');
      }
      return 'handled';
    } catch (error) {
      return this.fail(topic, error);
    }
  }

  /** Joins the device's waiting batch of reports from the same source, or starts one that waits for the device's turn. */
  private queueReport(topic: DeviceTopic, payload: Buffer, from: Source): Promise<Outcome> {
    const { deviceId } = topic;
    let batch = this.waiting.get(deviceId);
    if (!batch || batch.from.registration !== from.registration || batch.from.consuming !== from.consuming) {
      const payloads: Buffer[] = [];
      const handled = this.order.run(deviceId, () => {
        // Its turn: the reports taken from now on wait for the next one.
        if (this.waiting.get(deviceId)?.payloads === payloads) this.waiting.delete(deviceId);
        return this.handleReports(topic, payloads, from);
      });
      batch = { payloads, from, handled };
      this.waiting.set(deviceId, batch);
    }
    const index = batch.payloads.push(payload) - 1;
    return batch.handled.then((outcomes) => outcomes[index]!);
  }

  /** Never rejects: whatever a device sends, the bridge goes on. Refusals stand alone; a failure fails them all. */
  private async handleReports(topic: DeviceTopic, payloads: Buffer[], from: Source): Promise<Outcome[]> {
    let refused: (Outcome | null)[] = [];
    try {
      const decoded = payloads.map((payload) => decodeReport(payload));
      refused = decoded.map((report) => (report.ok ? null : this.reject(topic, report.problem)));
      const accepted = decoded.flatMap((report) => (report.ok ? [report.value] : []));
      const results = accepted.length ? await this.deps.devices.reports(topic.deviceId, accepted, from.registration, from.consuming) : [];
      let next = 0;
      return refused.map((outcome) => {
        if (outcome) return outcome;
        const result = results[next++];
        return result instanceof DeviceInputRefused ? this.reject(topic, result.message) : 'handled';
      });
    } catch (error) {
      const failed = this.failure(topic, error);
      return payloads.map((_, i) => refused[i] ?? failed);
    }
  }

  /** Never throws: whatever a device sends, the bridge goes on. */
  private async handle(topic: DeviceTopic, payload: Buffer, { registration, consuming }: Source): Promise<Outcome> {
    const { devices, logger } = this.deps;
    const { deviceId } = topic;
    try {
      if (topic.kind === 'push') {
        const push = decodePush(payload);
        if (!push.ok) return this.reject(topic, push.problem);
        await devices.push(deviceId, push.value.pushCode, registration, consuming);
      } else if (topic.kind === 'connection') {
        const connection = decodeConnection(payload);
        if (!connection.ok) return this.reject(topic, connection.problem);
        await devices.setConnection(deviceId, connection.value.online, registration, consuming);
        logger.debug({ deviceId, online: connection.value.online }, 'Device connection changed');
      }
      return 'handled';
    } catch (error) {
      return this.failure(topic, error);
    }
  }

  /** What a refusal or failure of Devices makes of a message. */
  private failure(topic: DeviceTopic, error: unknown): Outcome {
    if (error instanceof DeviceInputRefused) return this.reject(topic, error.message);
    if (error instanceof DeviceNotRegistered) {
      this.deps.logger.warn({ deviceId: topic.deviceId, kind: topic.kind }, 'MQTT message from a device that is not registered; ignored');
      return 'handled';
    }
    if (error instanceof StreamLost) {
      this.deps.logger.warn({ deviceId: topic.deviceId, kind: topic.kind }, 'MQTT message left unstored: another node consumes the device stream now');
      return 'failed';
    }
    return this.fail(topic, error);
  }

  /** A message that does not fit the contract or the profile: logged, counted, never stored. */
  private reject(topic: DeviceTopic, problem: string): Outcome {
    this.deps.logger.warn({ deviceId: topic.deviceId, kind: topic.kind, problem }, 'Device message rejected');
    this.deps.metrics?.reportsRejected.inc({ source: 'mqtt' });
    return new Refused(problem);
  }

  /** A message that could not be handled (the store failed, or a fault): logged, counted, not acknowledged. */
  private fail(topic: DeviceTopic, error: unknown): Outcome {
    this.deps.logger.error({ deviceId: topic.deviceId, kind: topic.kind, err: error }, 'MQTT message could not be handled; it is not acknowledged, so it comes again');
    this.deps.metrics?.reportsFailed.inc({ source: 'mqtt' });
    return 'failed';
  }
}

/** Where a message comes from, as `take` takes it. */
interface Source {
  registration: string | undefined;
  consuming: (() => boolean) | undefined;
}

/** A subscription of one of the cloud's connections that feeds the bridge; `stop()` ends it. */
export interface Consumer {
  /**
   * Takes nothing more (what still arrives is not acknowledged, so a kept session gets it again),
   * and resolves once the message in hand, if any, is handled and acknowledged. The subscriptions
   * stay: a kept session goes on queueing for whoever takes it up next.
   */
  stop(): Promise<void>;
}

/** How long stop() waits for the message in hand at most. */
const STOP_MS = 10_000;

/** Why a message is left unacknowledged (mqtt.js then reads on without sending a PUBACK). */
const NOT_TAKEN = new Error('the bridge has stopped');

/**
 * Subscribes one of the cloud's connections to an external broker to `filters` and feeds what
 * arrives to the bridge. A QoS 1 message is acknowledged only once it is handled: mqtt.js sends the
 * PUBACK when `handleMessage` calls back, and reads the next message only then. One that could not
 * be handled is not acknowledged: the connection is dropped instead, and on reconnection a
 * persistent session gets it again from the broker. `consuming`: the device stream's, as `take` takes it.
 */
export async function consumeFrom(client: MqttClient, bridge: Bridge, filters: string[], reporting: FaultReporting, consuming?: () => boolean): Promise<Consumer> {
  let stopped = false;
  /** mqtt.js hands over one message at a time: the one being handled, settled once it is answered. */
  let inHand: Promise<void> | null = null;
  client.handleMessage = (packet, callback) => {
    let answered!: () => void;
    inHand = new Promise((resolve) => (answered = resolve));
    const acknowledge = answerOnce((error?: Error) => {
      answered();
      callback(error);
    });
    const { stream } = client;
    const redeliver = () => {
      answered();
      reporting.logger.warn({ topic: packet.topic }, 'MQTT connection dropped so that the broker sends the message again');
      stream.destroy();
    };
    // Dropping the connection the message came on brings it back only when the broker keeps the
    // session; with a clean one it would be lost either way, so it is acknowledged.
    const unhandled = client.options.clean === false ? redeliver : () => acknowledge();
    guard(
      reporting,
      'handleMessage',
      { topic: packet.topic },
      async () => {
        const taken = stopped ? null : bridge.take(packet.topic, packet.payload, packet.retain, undefined, consuming);
        // What is not taken is not acknowledged either: the session's next holder gets it.
        if (!taken) return acknowledge(NOT_TAKEN);
        if ((await taken) !== 'failed') return acknowledge();
        unhandled();
      },
      unhandled,
    );
  };
  for (const message of held.get(client) ?? []) client.handleMessage(...message);
  held.delete(client);
  const granted = await client.subscribeAsync(filters, { qos: 1 });
  const refused = granted.filter((grant) => grant.qos > 2).map((grant) => grant.topic);
  if (refused.length) throw new Error(`The MQTT broker refused the subscriptions ${refused.join(', ')}`);
  return {
    async stop() {
      stopped = true;
      if (inHand) await Promise.race([inHand, sleep(STOP_MS)]);
    },
  };
}
