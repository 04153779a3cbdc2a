/**
 * The MQTT gateway (DESIGN B): the embedded broker on MQTT_PORT, or an external one at MQTT_URL
 * (which wins when both are set), the bridge that consumes what devices send, and the command
 * channel Devices uses for real devices.
 */
import type { MqttClient } from 'mqtt';
import type { Config } from '../config.js';
import type { DeviceChannel } from '../core/channel.js';
import type { Metrics } from '../metrics.js';
import type { Store } from '../store/store.js';
import { EmbeddedBroker } from './broker.js';
import { Bridge, connectService, redactUrl, type DeviceSink } from './bridge.js';
import { MqttCommandChannel } from './channel.js';
import type { GatewayLogger } from './logger.js';

export type { GatewayLogger } from './logger.js';

export interface Gateway {
  /** Where Devices sends commands for real devices. */
  channel: DeviceChannel;
  /** The embedded broker's bound port; null with an external broker or none. */
  port: number | null;
  mode: 'embedded' | 'external' | 'disabled';
  /** Whether the cloud's own connection to the broker is up (for /ready); false when disabled. */
  connected(): boolean;
  /** Stops consuming, answers waiting commands with 2209, disconnects, and stops the embedded broker. */
  close(): Promise<void>;
}

export interface GatewayDeps {
  config: Pick<Config, 'mqttPort' | 'mqttUrl' | 'host'>;
  devices: DeviceSink;
  store: Pick<Store, 'getDevice'>;
  logger: GatewayLogger;
  metrics?: Pick<Metrics, 'reportsRejected'>;
  /** Starts the embedded broker here instead of config.mqttPort/host; port 0 = ephemeral (tests). */
  listen?: { port: number; host?: string };
  /** The shared-subscription group on an external broker: one name per deployment. */
  sharedGroup?: string;
}

const DEFAULT_SHARED_GROUP = 'appliance-cloud';

/** Without a broker a real device cannot be reached; the answer is the one for a silent device. */
const unreachable: DeviceChannel = {
  async sendCommand(device) {
    return { ok: false, code: '2209', message: `No MQTT broker is configured, so device ${device.deviceId} cannot be reached.` };
  },
};

/**
 * A channel for createContext before the gateway exists: Devices needs a channel and the gateway
 * needs Devices. `attach(gateway.channel)` once it has started; until then commands answer 2209.
 */
export function deferredChannel(): DeviceChannel & { attach(channel: DeviceChannel): void } {
  let target: DeviceChannel | null = null;
  return {
    attach(channel) {
      target = channel;
    },
    async sendCommand(device, status, command, timeoutMs) {
      if (!target) return { ok: false, code: '2209', message: `The device gateway has not started, so device ${device.deviceId} cannot be reached.` };
      return target.sendCommand(device, status, command, timeoutMs);
    },
  };
}

/** Where the cloud reaches a broker it listens with itself: loopback when bound to every interface. */
function loopbackUrl(host: string, port: number): string {
  const reachable = host === '' || host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `mqtt://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

/** Starts the gateway the settings ask for. */
export async function startGateway(deps: GatewayDeps): Promise<Gateway> {
  const { config, logger } = deps;
  if (config.mqttUrl) {
    const client = await connectService({ url: config.mqttUrl, protocolVersion: 5, logger });
    logger.info({ broker: redactUrl(config.mqttUrl) }, 'MQTT gateway connected to an external broker');
    return run(deps, client, deps.sharedGroup ?? DEFAULT_SHARED_GROUP, null);
  }
  const listen = deps.listen ?? (config.mqttPort === 0 ? null : { port: config.mqttPort, host: config.host });
  if (!listen) {
    logger.info({}, 'MQTT gateway disabled: no MQTT_PORT and no MQTT_URL');
    return { channel: unreachable, port: null, mode: 'disabled', connected: () => false, close: async () => undefined };
  }
  const broker = new EmbeddedBroker({ ...listen, store: deps.store, logger });
  const port = await broker.start();
  try {
    const { username, password } = broker.serviceCredentials;
    const client = await connectService({ url: loopbackUrl(listen.host ?? '', port), username, password, protocolVersion: 4, logger });
    logger.info({ port }, 'MQTT gateway: embedded broker listening');
    return await run(deps, client, null, { broker, port });
  } catch (error) {
    await broker.close();
    throw error;
  }
}

/** Bridge and channel over the cloud's connection, the same for either broker. */
async function run(
  deps: GatewayDeps,
  client: MqttClient,
  sharedGroup: string | null,
  embedded: { broker: EmbeddedBroker; port: number } | null,
): Promise<Gateway> {
  const channel = new MqttCommandChannel(async (topic, payload) => {
    await client.publishAsync(topic, payload, { qos: 1 });
  });
  const bridge = new Bridge({ client, devices: deps.devices, results: channel, logger: deps.logger, metrics: deps.metrics, sharedGroup });
  try {
    await bridge.start();
  } catch (error) {
    await client.endAsync(true);
    throw error;
  }
  const shutDown = async () => {
    await bridge.stop();
    channel.close();
    // The embedded broker's devices lose their connection with it; their wills would find no one listening.
    for (const deviceId of embedded?.broker.connectedDevices() ?? []) {
      await deps.devices.setConnection(deviceId, false).catch((error: unknown) => deps.logger.warn({ deviceId, err: error }, 'Could not mark a device offline'));
    }
    // Not forced while connected, so that commands and acks in flight still go out.
    await client.endAsync(!client.connected);
    await embedded?.broker.close();
  };
  let closing: Promise<void> | null = null;
  return {
    channel,
    port: embedded?.port ?? null,
    mode: embedded ? 'embedded' : 'external',
    connected: () => client.connected,
    close() {
      closing ??= shutDown();
      return closing;
    },
  };
}
