/**
 * The MQTT gateway (DESIGN B): the embedded broker on MQTT_PORT, or an external one at MQTT_URL
 * (which wins when both are set), the bridge that consumes what devices send, and the command
 * channel Devices uses for real devices.
 */
import { hostname } from 'node:os';
import { ConfigError, type Config } from '../config.js';
import { unreachable, type DeviceChannel } from '../core/channel.js';
import { DeviceNotRegistered } from '../core/errors.js';
import { RESULT_FILTER } from '../device-protocol/topics.js';
import { randomId } from '../ids.js';
import type { Metrics } from '../metrics.js';
import type { DeviceRegistrations } from '../core/cache.js';
import type { Store } from '../store/store.js';
import { Bridge, connectService, consumeFrom, redactUrl, type Consumer, type DeviceSink } from './bridge.js';
import { startDeviceStream, type DeviceStream } from './device-stream.js';
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
  /** Whether what devices send comes to this node: on an external broker, to one node at a time (device-stream.ts). */
  holdsDeviceStream(): boolean;
  /** Stops consuming, answers waiting commands with 2209, disconnects, and stops the embedded broker. */
  close(): Promise<void>;
}

export interface GatewayDeps {
  config: Pick<Config, 'mqttPort' | 'mqttUrl' | 'mqttDeployment' | 'host' | 'mode' | 'port'>;
  devices: DeviceSink;
  /** Devices' credentials for the embedded broker; the lease of the device stream on an external one. */
  store: Pick<Store, 'getDevice' | 'holdLease' | 'releaseLease'>;
  /** What the embedded broker checks its connected devices against: still registered, with the secret they connected with. */
  registrations: DeviceRegistrations;
  logger: GatewayLogger;
  metrics?: Pick<Metrics, 'reportsRejected' | 'reportsFailed' | 'brokerFaults'>;
  /** Starts the embedded broker here instead of config.mqttPort/host; port 0 = ephemeral (tests). */
  listen?: { port: number; host?: string };
  /** On an external broker, the deployment's name instead of config.mqttDeployment (tests: one per test). */
  deployment?: string;
  /** The device stream's lease and session (device-stream.ts), shorter in tests. */
  leaseMs?: number;
  sessionExpiryS?: number;
}

/** Starts the gateway the settings ask for. */
export async function startGateway(deps: GatewayDeps): Promise<Gateway> {
  const { config, logger } = deps;
  if (config.mqttUrl) return startExternal(deps, config.mqttUrl);
  const listen = deps.listen ?? (config.mqttPort === 0 ? null : { port: config.mqttPort, host: config.host });
  if (!listen) {
    logger.info({}, 'MQTT gateway disabled: no MQTT_PORT and no MQTT_URL');
    return { channel: unreachable('No MQTT broker is configured'), port: null, mode: 'disabled', connected: () => false, holdsDeviceStream: () => false, close: async () => undefined };
  }
  return startEmbedded(deps, listen);
}

/**
 * On an external broker: each node publishes commands and reads their results on a connection of
 * its own, and one node at a time consumes what devices send (device-stream.ts).
 */
async function startExternal(deps: GatewayDeps, url: string): Promise<Gateway> {
  const { logger, metrics } = deps;
  const node = `${hostname()}:${process.pid}:${randomId(6)}`;
  const commands = await connectService({ url, clientId: `appliance-cloud:${node}:commands`, logger }).catch((error: unknown) => {
    // At start a broker that does not answer or refuses the login is a setting to fix, as an unreachable DATABASE_URL is.
    throw new ConfigError(`MQTT_URL: ${error instanceof Error ? error.message : String(error)}; start the broker, check the URL's host, port and credentials, or unset MQTT_URL for the embedded broker`);
  });
  logger.info({ broker: redactUrl(url) }, 'MQTT gateway connected to an external broker');
  const channel = new MqttCommandChannel(async (topic, payload) => {
    await commands.publishAsync(topic, payload, { qos: 0 });
  });
  const bridge = new Bridge({ devices: deps.devices, results: channel, logger, metrics });
  const reporting = { logger, metrics };
  let results: Consumer | undefined;
  let stream: DeviceStream | undefined;
  try {
    results = await consumeFrom(commands, bridge, [RESULT_FILTER], reporting);
    stream = await startDeviceStream({
      url,
      deployment: deps.deployment ?? deps.config.mqttDeployment,
      node,
      leases: deps.store,
      bridge,
      reporting,
      logger,
      ...(deps.leaseMs === undefined ? {} : { leaseMs: deps.leaseMs }),
      ...(deps.sessionExpiryS === undefined ? {} : { sessionExpiryS: deps.sessionExpiryS }),
    });
  } catch (error) {
    await commands.endAsync(true);
    throw error;
  }
  const devices = stream;
  const shutDown = async () => {
    await devices.close();
    await results!.stop();
    await bridge.stop();
    channel.close();
    // Not forced while connected, so that commands and acks in flight still go out.
    await commands.endAsync(!commands.connected);
  };
  return { channel, port: null, mode: 'external', connected: () => commands.connected && devices.healthy(), holdsDeviceStream: () => devices.holding(), close: once(shutDown) };
}

/** The embedded broker, whose device publishes the bridge takes in process (no loopback connection). */
async function startEmbedded(deps: GatewayDeps, listen: { port: number; host?: string }): Promise<Gateway> {
  const channel = new MqttCommandChannel((topic, payload): Promise<void> => broker.publish(topic, payload));
  const bridge = new Bridge({ devices: deps.devices, results: channel, logger: deps.logger, metrics: deps.metrics });
  const broker: EmbeddedBroker = new EmbeddedBroker({ ...listen, store: deps.store, registrations: deps.registrations, logger: deps.logger, metrics: deps.metrics, bridge });
  // No device is connected to a broker that starts, whatever the database says: a node that was killed
  // left its devices online (a stop marks them offline, a crash cannot). The embedded broker serves a
  // deployment of one node; several share an external broker (DESIGN B).
  const stale = await deps.devices.setRealDevicesOffline();
  if (stale > 0) deps.logger.info({ devices: stale }, 'MQTT gateway: devices left online by the last run marked offline until they connect');
  const port = await broker.start();
  deps.logger.info({ port }, 'MQTT gateway: embedded broker listening');
  const shutDown = async () => {
    await bridge.stop();
    channel.close();
    // The embedded broker's devices lose their connection with it; their wills would find no one listening.
    // Each for the registration it connected as: one registered under its id since is not this connection's.
    for (const { deviceId, registration } of broker.connectedDevices()) {
      await deps.devices.setConnection(deviceId, false, registration).catch((error: unknown) => {
        if (error instanceof DeviceNotRegistered) deps.logger.debug({ deviceId }, 'Not marked offline: the device is no longer registered as it connected');
        else deps.logger.warn({ deviceId, err: error }, 'Could not mark a device offline');
      });
    }
    await broker.close();
  };
  return { channel, port, mode: 'embedded', connected: () => broker.listening(), holdsDeviceStream: () => broker.listening(), close: once(shutDown) };
}

/** `close()` that runs once, however often it is called. */
function once(shutDown: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | null = null;
  return () => {
    closing ??= shutDown();
    return closing;
  };
}
