/**
 * The cloud's side of the broker (DESIGN B): the bridge hands what devices send to Devices. With the
 * embedded broker it takes each device publish in process, before the broker acknowledges it (see
 * broker.ts); with an external broker, one privileged MQTT connection consumes it (`consumeFrom`)
 * and carries the commands the channel publishes.
 *
 * With several nodes on one external broker:
 * - reports and pushes arrive through a shared subscription (`$share/{group}/…`), so each is
 *   processed by exactly one node;
 * - connection messages are consumed by every node: a shared subscription gets no retained
 *   messages, which are what re-syncs online flags when a node starts, and setting the same flag
 *   in the same per-topic order on every node leaves the last message's value;
 * - command results are consumed by every node too (per-node reply correlation): only the node
 *   that published a command holds its commandId, and the others ignore results they do not know.
 */
import { connect, type IPublishPacket, type MqttClient } from 'mqtt';
import { KeyedLock } from '../core/lock.js';
import { ApiError } from '../errors.js';
import { randomId } from '../ids.js';
import type { Metrics } from '../metrics.js';
import { decodeCommandResult, decodeConnection, decodePush, decodeReport, type CommandResult } from './codec.js';
import type { GatewayLogger } from './logger.js';
import { parseTopic, serviceFilters, type DeviceTopic } from './topics.js';

/** What the bridge asks of Devices. */
export interface DeviceSink {
  report(deviceId: string, report: unknown): Promise<unknown>;
  push(deviceId: string, pushCode: unknown): Promise<void>;
  setConnection(deviceId: string, online: boolean): Promise<void>;
}

/** Where command results go (the command channel). */
export interface ResultSink {
  settle(deviceId: string, result: CommandResult): boolean;
}

export interface ServiceConnectionOptions {
  url: string;
  username?: string;
  password?: string;
  /** Aedes speaks 3.1.1; external brokers get 5, whose shared subscriptions are standard. */
  protocolVersion: 4 | 5;
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

/**
 * Connects the cloud's client, with a clean session and automatic reconnection (mqtt.js then
 * resubscribes by itself). Fails when the first connection is refused or does not come in time.
 */
export async function connectService(options: ServiceConnectionOptions): Promise<MqttClient> {
  const timeoutMs = options.connectTimeoutMs ?? 10_000;
  const client = connect(options.url, {
    // `:` keeps it out of the device id alphabet, so no device's client id can take this session over.
    clientId: `appliance-cloud:${randomId(9)}`,
    clean: true,
    protocolVersion: options.protocolVersion,
    reconnectPeriod: 1000,
    connectTimeout: timeoutMs,
    ...(options.username === undefined ? {} : { username: options.username }),
    ...(options.password === undefined ? {} : { password: options.password }),
  });
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

/** What a message that needs no work waits for. */
const DONE: Promise<void> = Promise.resolve();

export interface BridgeDeps {
  devices: DeviceSink;
  results: ResultSink;
  logger: GatewayLogger;
  metrics?: Pick<Metrics, 'reportsRejected'>;
}

/**
 * Hands device → cloud messages to Devices, whichever broker they come through; `stop()` resolves
 * once every message taken is handled.
 */
export class Bridge {
  private stopping = false;
  /** Per device, messages are handled one at a time in arrival order; devices run in parallel. */
  private readonly order = new KeyedLock();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly deps: BridgeDeps) {}

  /**
   * Takes one message; the promise settles once it is handled (stored, or refused and counted) and
   * never rejects. null once the bridge is stopping: the message is not taken and must not be acknowledged.
   * `retained` is for a retained message replayed to a new subscription, not a device's live publish.
   */
  take(topic: string, payload: Buffer, retained: boolean): Promise<void> | null {
    if (this.stopping) return null;
    const parsed = parseTopic(topic);
    // A zero-length payload is how MQTT deletes a retained message: nothing to consume.
    if (!parsed || payload.length === 0) return DONE;
    // Results go straight to the channel, never behind the device's queue: a report queued before
    // the result would wait on the device lock that the command holds until its result comes.
    if (parsed.kind === 'command/result') {
      this.settle(parsed.deviceId, payload);
      return DONE;
    }
    // A retained report or push is an old message replayed; only the connection flag is meant to be kept.
    if (retained && parsed.kind !== 'connection') return DONE;
    const work = this.order.run(parsed.deviceId, () => this.handle(parsed, payload));
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
    return work;
  }

  /** Takes no more messages, then waits for those taken. */
  async stop(): Promise<void> {
    this.stopping = true;
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }

  private settle(deviceId: string, payload: Buffer): void {
    const result = decodeCommandResult(payload);
    if (!result.ok) return this.reject({ deviceId, kind: 'command/result' }, result.problem);
    if (!this.deps.results.settle(deviceId, result.value)) {
      this.deps.logger.debug({ deviceId, commandId: result.value.commandId }, 'Command result for no command of this node');
    }
  }

  /** Never throws: whatever a device sends, the bridge goes on. */
  private async handle(topic: DeviceTopic, payload: Buffer): Promise<void> {
    const { devices, logger } = this.deps;
    const { deviceId } = topic;
    try {
      if (topic.kind === 'state') {
        const report = decodeReport(payload);
        if (!report.ok) return this.reject(topic, report.problem);
        await devices.report(deviceId, report.value);
      } else if (topic.kind === 'push') {
        const push = decodePush(payload);
        if (!push.ok) return this.reject(topic, push.problem);
        await devices.push(deviceId, push.value.pushCode);
      } else if (topic.kind === 'connection') {
        const connection = decodeConnection(payload);
        if (!connection.ok) return this.reject(topic, connection.problem);
        await devices.setConnection(deviceId, connection.value.online);
        logger.debug({ deviceId, online: connection.value.online }, 'Device connection changed');
      }
    } catch (error) {
      if (error instanceof ApiError && error.code === '1102') return this.reject(topic, error.message);
      if (error instanceof ApiError && error.code === '1205') {
        return logger.warn({ deviceId, kind: topic.kind }, 'MQTT message from a device that is not registered; ignored');
      }
      logger.error({ deviceId, kind: topic.kind, err: error }, 'MQTT message could not be handled');
    }
  }

  /** A message that does not fit the contract or the profile: logged, counted, never stored. */
  private reject(topic: DeviceTopic, problem: string): void {
    this.deps.logger.warn({ deviceId: topic.deviceId, kind: topic.kind, problem }, 'Device message rejected');
    this.deps.metrics?.reportsRejected.inc({ source: 'mqtt' });
  }
}

/** A subscription of the cloud's connection that feeds the bridge; `stop()` ends it. */
export interface Consumer {
  stop(): Promise<void>;
}

/**
 * Subscribes the cloud's connection to an external broker and feeds what arrives to the bridge.
 * mqtt.js acknowledges a QoS 1 message on receipt.
 */
export async function consumeFrom(client: MqttClient, bridge: Bridge, sharedGroup: string, logger: GatewayLogger): Promise<Consumer> {
  const onMessage = (topic: string, payload: Buffer, packet: IPublishPacket) => void bridge.take(topic, payload, packet.retain);
  client.on('message', onMessage);
  const granted = await client.subscribeAsync(serviceFilters(sharedGroup), { qos: 1 });
  const refused = granted.filter((grant) => grant.qos > 2).map((grant) => grant.topic);
  if (refused.length) throw new Error(`The MQTT broker refused the subscriptions ${refused.join(', ')}`);
  return {
    /** Unsubscribes first, so that the shared group's other nodes take over. */
    async stop() {
      if (client.connected) {
        await client.unsubscribeAsync(serviceFilters(sharedGroup)).catch((error: unknown) => logger.warn({ err: error }, 'MQTT unsubscribe failed'));
      }
      client.off('message', onMessage);
      // What still arrives is not handled, so it is not acknowledged either: the broker may give it
      // to another node, and no PUBACK is written once the connection has ended (ERR_STREAM_WRITE_AFTER_END).
      client.handleMessage = (_packet, done) => done(new Error('the bridge has stopped'));
    },
  };
}
