/**
 * The MQTT gateway (DESIGN B): the embedded broker on MQTT_PORT, or an external one at MQTT_URL
 * (which wins when both are set), the bridge that consumes what devices send, and the command
 * channel Devices uses for real devices.
 */
import { hostname } from 'node:os';
import type { Config } from '../config.js';
import { unreachable, type DeviceChannel } from '../core/channel.js';
import { RESULT_FILTER, storedFilters } from '../device-protocol/topics.js';
import type { Metrics } from '../metrics.js';
import type { Store } from '../store/store.js';
import { Bridge, connectService, consumeFrom, redactUrl, type DeviceSink } from './bridge.js';
import { EmbeddedBroker } from './broker.js';
import { MqttCommandChannel } from './channel.js';
import type { GatewayLogger } from './logger.js';

export type { GatewayLogger } from './logger.js';

export interface Gateway {
  /** Where Devices sends commands for real devices. */
  channel: DeviceChannel;
  /** The embedded broker's bound port; null with an external broker or none. */
  port: number | null;
  mode: 'embedded' | 'external' | 'disabled';
  /** Whether the cloud's connection to the external broker is up, or the embedded one listens (for /ready); false when disabled. */
  connected(): boolean;
  /** Stops consuming, answers waiting commands with 2209, disconnects, and stops the embedded broker. */
  close(): Promise<void>;
}

export interface GatewayDeps {
  config: Pick<Config, 'mqttPort' | 'mqttUrl' | 'host' | 'mode' | 'port'>;
  devices: DeviceSink;
  store: Pick<Store, 'getDevice'>;
  logger: GatewayLogger;
  metrics?: Pick<Metrics, 'reportsRejected' | 'reportsFailed' | 'brokerFaults'>;
  /** Starts the embedded broker here instead of config.mqttPort/host; port 0 = ephemeral (tests). */
  listen?: { port: number; host?: string };
  /** The shared-subscription group on an external broker: one name per deployment. */
  sharedGroup?: string;
}

const DEFAULT_SHARED_GROUP = 'appliance-cloud';

/** Starts the gateway the settings ask for. */
export async function startGateway(deps: GatewayDeps): Promise<Gateway> {
  const { config, logger } = deps;
  if (config.mqttUrl) return startExternal(deps, config.mqttUrl, deps.sharedGroup ?? DEFAULT_SHARED_GROUP);
  const listen = deps.listen ?? (config.mqttPort === 0 ? null : { port: config.mqttPort, host: config.host });
  if (!listen) {
    logger.info({}, 'MQTT gateway disabled: no MQTT_PORT and no MQTT_URL');
    return { channel: unreachable('No MQTT broker is configured'), port: null, mode: 'disabled', connected: () => false, close: async () => undefined };
  }
  return startEmbedded(deps, listen);
}

/**
 * Bridge and channel over two connections to an external broker (see bridge.ts): `commands` publishes
 * commands and reads their results; `reports`, on a persistent session, reads what is stored.
 */
async function startExternal(deps: GatewayDeps, url: string, sharedGroup: string): Promise<Gateway> {
  const { logger, metrics } = deps;
  const commands = await connectService({ url, role: 'commands', logger });
  const reports = await connectService({ url, role: 'reports', persistentSession: true, node: nodeName(deps.config), logger }).catch(async (error: unknown) => {
    await commands.endAsync(true);
    throw error;
  });
  logger.info({ broker: redactUrl(url) }, 'MQTT gateway connected to an external broker');
  const channel = new MqttCommandChannel(async (topic, payload) => {
    await commands.publishAsync(topic, payload, { qos: 1 });
  });
  const bridge = new Bridge({ devices: deps.devices, results: channel, logger, metrics });
  const reporting = { logger, metrics };
  // Ended with the session once it holds nothing more (a node that stops leaves nothing for the
  // broker to keep); otherwise the session stays, for a node started again under this name.
  const endAll = (drained = true) =>
    Promise.all([commands.endAsync(!commands.connected), reports.endAsync(!reports.connected, drained ? { properties: { sessionExpiryInterval: 0 } } : {})]);
  const consumers = await Promise.all([
    consumeFrom(commands, bridge, [RESULT_FILTER], reporting),
    consumeFrom(reports, bridge, storedFilters(sharedGroup), reporting),
  ]).catch(async (error: unknown) => {
    await endAll();
    throw error;
  });
  const shutDown = async () => {
    const [, stored] = await Promise.all(consumers.map((consumer) => consumer.stop()));
    await bridge.stop();
    channel.close();
    // Not forced while connected, so that commands and acks in flight still go out.
    await endAll(stored!.drained);
  };
  return { channel, port: null, mode: 'external', connected: () => commands.connected && reports.connected, close: once(shutDown) };
}

/**
 * The node's name on the broker: its host and HTTP port, which no other running node shares and
 * which it keeps when it starts again. Mosquitto hands a shared subscription's messages to a member
 * whose connection is gone as well, queued in its session; only a node started again under the same
 * client id gets them. Only `serve` binds its port as set (see server.ts); other modes get a random one.
 */
function nodeName(config: Pick<Config, 'mode' | 'port'>): string | undefined {
  return config.mode === 'serve' ? `${hostname()}:${config.port}` : undefined;
}

/** The embedded broker, whose device publishes the bridge takes in process (no loopback connection). */
async function startEmbedded(deps: GatewayDeps, listen: { port: number; host?: string }): Promise<Gateway> {
  const channel = new MqttCommandChannel((topic, payload): Promise<void> => broker.publish(topic, payload));
  const bridge = new Bridge({ devices: deps.devices, results: channel, logger: deps.logger, metrics: deps.metrics });
  const broker: EmbeddedBroker = new EmbeddedBroker({ ...listen, store: deps.store, logger: deps.logger, metrics: deps.metrics, bridge });
  const port = await broker.start();
  deps.logger.info({ port }, 'MQTT gateway: embedded broker listening');
  const shutDown = async () => {
    await bridge.stop();
    channel.close();
    // The embedded broker's devices lose their connection with it; their wills would find no one listening.
    for (const deviceId of broker.connectedDevices()) {
      await deps.devices.setConnection(deviceId, false).catch((error: unknown) => deps.logger.warn({ deviceId, err: error }, 'Could not mark a device offline'));
    }
    await broker.close();
  };
  return { channel, port, mode: 'embedded', connected: () => broker.listening(), close: once(shutDown) };
}

/** `close()` that runs once, however often it is called. */
function once(shutDown: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | null = null;
  return () => {
    closing ??= shutDown();
    return closing;
  };
}
