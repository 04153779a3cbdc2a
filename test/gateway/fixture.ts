/**
 * A cloud with its MQTT gateway on the embedded broker (ephemeral port) or on the Mosquitto at
 * 127.0.0.1:1883, a partner world to call it with, and real devices that connect with their secrets.
 * Its store is the test database (TEST_DATABASE_URL: a fresh PostgreSQL database per file).
 */
import { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { connectAsync } from 'mqtt';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createContext, type ContextWithSimulator } from '../../src/context.js';
import { DeviceClient, type DeviceClientOptions } from '../../src/device-protocol/device-client.js';
import { topicOf } from '../../src/device-protocol/topics.js';
import { startGateway, type Gateway } from '../../src/gateway/index.js';
import { randomId, systemClock } from '../../src/ids.js';
import type { Metrics } from '../../src/metrics.js';
import { timerScheduler } from '../../src/sim/scheduler.js';
import { createWorld, testStore, type World } from '../helpers/app.js';

import { MOSQUITTO_URL, TEST_STREAM } from './settings.js';

export { MOSQUITTO_URL };
export type BrokerKind = 'embedded' | 'mosquitto';

/** Whether something accepts TCP connections on the Mosquitto port. */
export async function mosquittoReachable(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (up: boolean) => {
      socket.destroy();
      resolve(up);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.connect(1883, '127.0.0.1');
  });
}

/** The model every gateway test uses: simple flat resources, a push code and writable enums. */
export const DEVICE_TYPE = 'DEVICE_DEHUMIDIFIER';

export interface RealDevice {
  deviceId: string;
  secret: string;
}

export interface Cloud {
  app: FastifyInstance;
  ctx: ContextWithSimulator;
  metrics: Metrics;
  gateway: Gateway;
  world: World;
  /** Where devices connect. */
  url: string;
  /** The deployment's name on an external broker (MQTT_DEPLOYMENT), one per test. */
  deployment: string;
  /** Registers a real (MQTT) device to the world's user, with an id unique on a shared broker. */
  addDevice(): Promise<RealDevice>;
  /** Connects a device client; it is closed with the cloud. */
  connect(device: RealDevice, options?: Partial<DeviceClientOptions>): Promise<DeviceClient>;
  /** Another node of the same deployment: a second gateway over the same store, with Devices of its own (its own status locks) as a node in a process of its own has. */
  addNode(): Promise<Gateway>;
  close(): Promise<void>;
}

/**
 * `databaseUrl`: the store's database instead of the test database (a file another connection can
 * lock). `protocolVersion`: the MQTT version devices connected by `connect` speak (default 4, 3.1.1).
 * `mosquitto`: another Mosquitto than the machine's, where the cloud and devices connect to listeners of their own.
 */
export async function startCloud(
  broker: BrokerKind,
  options: { controlTimeoutMs?: number; databaseUrl?: string; protocolVersion?: 4 | 5; mosquitto?: { cloudUrl: string; deviceUrl: string } } = {},
): Promise<Cloud> {
  const settings = {
    CONTROL_TIMEOUT_MS: String(options.controlTimeoutMs ?? 5000),
    ...(broker === 'mosquitto' ? { MQTT_URL: options.mosquitto?.cloudUrl ?? MOSQUITTO_URL } : {}),
  };
  const config = loadConfig('test', settings);
  const { store, close: closeStore } = await testStore(options.databaseUrl);
  const ctx = createContext(config, store, systemClock, { scheduler: timerScheduler });
  let gateway: Gateway | null = null;
  const { server: app, metrics } = await buildApp(ctx, { broker: () => gateway?.connected() ?? false });
  await app.ready();
  // A deployment per test, so that tests sharing one Mosquitto never take each other's reports.
  const deployment = `test-${randomId(6)}`;
  const start = (node: { devices: typeof ctx.devices; lookups: typeof ctx.lookups } = ctx) =>
    startGateway({
      config,
      devices: node.devices,
      store,
      registrations: node.lookups,
      logger: app.log,
      metrics,
      deployment,
      ...TEST_STREAM,
      ...(broker === 'embedded' ? { listen: { port: 0, host: '127.0.0.1' } } : {}),
    });
  const started = await start();
  gateway = started;
  ctx.channels.attach('real', started.channel);
  const nodes: Gateway[] = [started];
  const world = await createWorld(ctx, { deviceTypes: [] });
  const url = broker === 'mosquitto' ? (options.mosquitto?.deviceUrl ?? MOSQUITTO_URL) : `mqtt://127.0.0.1:${started.port}`;
  const clients: DeviceClient[] = [];
  const deviceIds: string[] = [];

  return {
    app,
    ctx,
    metrics,
    gateway: started,
    world,
    url,
    deployment,
    async addDevice() {
      const { device, deviceSecret } = await ctx.devices.register(world.userNumber, {
        deviceType: DEVICE_TYPE,
        deviceId: `gw-${randomId(9)}`,
        alias: 'Basement dehumidifier',
        virtual: false,
      });
      deviceIds.push(device.deviceId);
      world.devices.push({ deviceId: device.deviceId, deviceType: device.deviceType });
      return { deviceId: device.deviceId, secret: deviceSecret };
    },
    async connect(device, extra = {}) {
      const client = await DeviceClient.connect({ url, deviceId: device.deviceId, secret: device.secret, protocolVersion: options.protocolVersion ?? 4, ...extra });
      clients.push(client);
      return client;
    },
    async addNode() {
      const node = await start(createContext(config, store, systemClock));
      nodes.push(node);
      return node;
    },
    async close() {
      await Promise.all(clients.map((client) => client.mqtt.endAsync(true)));
      for (const node of nodes) await node.close();
      if (broker === 'mosquitto' && !options.mosquitto && deviceIds.length) await clearRetained(deviceIds);
      await app.close();
      await closeStore();
    },
  };
}

/** Leaves the shared Mosquitto as it was: a zero-length retained message deletes the retained one. */
async function clearRetained(deviceIds: string[]): Promise<void> {
  const client = await connectAsync(MOSQUITTO_URL, { clientId: `cleanup-${randomId(6)}`, reconnectPeriod: 0 });
  for (const deviceId of deviceIds) await client.publishAsync(topicOf(deviceId, 'connection'), '', { qos: 1, retain: true });
  await client.endAsync();
}
