/**
 * A server as a library: `startServer` opens the store, builds the app, starts the gateway, the
 * simulator and delivery, and listens; signals drain it (DESIGN E). The process entry is the CLI.
 */
import type { AddressInfo } from 'node:net';
import { constants } from 'node:os';
import { buildApp, type App } from './app.js';
import { baseUrl, ConfigError, configWarnings, deploymentRecord, DEPLOYMENT_RECORD, type Config } from './config.js';
import { createContext, type AppContext } from './context.js';
import { startDelivery, type Delivery } from './delivery/index.js';
import { startGateway, type Gateway } from './gateway/index.js';
import type { Clock } from './ids.js';
import { timerScheduler } from './sim/scheduler.js';
import type { Simulator } from './sim/simulator.js';
import { processClock } from './store/database-time.js';
import { openStore } from './store/index.js';

export interface StartOptions {
  /** Runs on the context and the app before the server accepts requests: the sandbox seeds its world here. */
  prepare?: (ctx: AppContext, app: App) => Promise<void>;
  /** When the configured HTTP or MQTT port is taken, listen on a free one instead of failing (the sandbox does). */
  anyPortIfTaken?: boolean;
  /**
   * Runs once the server runs, before the line saying so: the CLI takes SIGTERM and SIGINT here, so
   * that a signal sent the moment that line shows drains the server rather than killing it.
   */
  running?: (server: RunningServer) => void;
}

export interface RunningServer {
  app: App;
  ctx: AppContext;
  /** What is listening, as a local URL: `http://127.0.0.1:8080`. */
  url: string;
  port: number;
  /** Whether the configured port was taken and another was chosen. */
  portTaken: boolean;
  /** The embedded MQTT broker's port (null with an external broker or none), and whether MQTT_PORT was taken. */
  mqtt: { port: number | null; portTaken: boolean };
  /** Stops accepting requests and claiming deliveries, lets those in flight finish, then closes the broker and the store. */
  stop(): Promise<void>;
}

/** The configured port is in use by another process: a setting that cannot be used, so the CLI exits 2. */
export class PortInUseError extends ConfigError {
  constructor(host: string, port: number, setting = 'PORT or --port') {
    super(`Port ${port} on ${host} is already in use; choose another with ${setting} (0 picks a free one).`);
    this.name = 'PortInUseError';
  }
}

function isAddressInUse(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === 'EADDRINUSE';
}

/** Codes of a HOST that names no address of this machine: a setting to fix, so the CLI exits 2. */
const UNUSABLE_HOST = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EADDRNOTAVAIL']);

/** `error` as the HOST mistake it stands for, or itself. */
function hostError(error: unknown, host: string): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === undefined || !UNUSABLE_HOST.has(code)) return error;
  return new ConfigError(`HOST: cannot listen on "${host}" (${code}); name an address of this machine, such as 127.0.0.1, 0.0.0.0 or ::`);
}

function localUrl(address: AddressInfo): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

async function listen(app: App, config: Config, anyPortIfTaken: boolean): Promise<{ address: AddressInfo; portTaken: boolean }> {
  try {
    await app.server.listen({ host: config.host, port: config.port });
    return { address: app.server.server.address() as AddressInfo, portTaken: false };
  } catch (error) {
    if (!isAddressInUse(error)) throw hostError(error, config.host);
    if (!anyPortIfTaken) throw new PortInUseError(config.host, config.port);
    await app.server.listen({ host: config.host, port: 0 });
    return { address: app.server.server.address() as AddressInfo, portTaken: true };
  }
}

/** The gateway of the settings; with `anyPortIfTaken`, a taken MQTT_PORT falls back to a free port. */
async function startMqtt(config: Config, ctx: AppContext, app: App, anyPortIfTaken: boolean): Promise<{ gateway: Gateway; portTaken: boolean }> {
  const deps = { config, devices: ctx.devices, store: ctx.store, registrations: ctx.lookups, logger: app.server.log, metrics: app.metrics };
  try {
    return { gateway: await startGateway(deps), portTaken: false };
  } catch (error) {
    if (!isAddressInUse(error)) throw hostError(error, config.host);
    if (!anyPortIfTaken) throw new PortInUseError(config.host, config.mqttPort, 'MQTT_PORT or --mqtt-port');
    return { gateway: await startGateway({ ...deps, listen: { port: 0, host: config.host } }), portTaken: true };
  }
}

/** Opens the store (openStore migrates it), builds the app on it and listens on config.host:config.port. */
export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const store = await openStore(config.databaseUrl);
  let app: App | undefined;
  let gateway: Gateway | undefined;
  let delivery: Delivery | undefined;
  let simulator: Simulator | undefined;
  let time: { clock: Clock; stop: () => void } | undefined;
  try {
    // On a shared database every node keeps the database's time, which the store compares across nodes.
    time = await processClock(store.capabilities);
    const { clock } = time;
    // For the admin CLI on this database, which judges callback URLs and countries as this server does.
    await store.writeSharedSetting(DEPLOYMENT_RECORD, deploymentRecord(config));
    const ctx = createContext(config, store, clock, { scheduler: timerScheduler });
    app = await buildApp(ctx, { broker: () => gateway !== undefined && (gateway.mode === 'disabled' || gateway.connected()) });
    const mqtt = await startMqtt(config, ctx, app, options.anyPortIfTaken ?? false);
    gateway = mqtt.gateway;
    // The gateway feeds Devices, so it starts after them: real devices' commands reach it from now on.
    ctx.channels.attach('real', gateway.channel);
    await options.prepare?.(ctx, app);
    // After prepare, so the simulator adopts the sandbox's freshly seeded appliances.
    await ctx.simulator.start();
    simulator = ctx.simulator;
    delivery = await startDelivery({ store, clock, config, registry: app.metrics.registry, log: app.server.log });
    const { address, portTaken } = await listen(app, config, options.anyPortIfTaken ?? false);
    const url = localUrl(address);
    const server = app;
    const broker = gateway;
    const deliveries = delivery;
    let stopping: Promise<void> | undefined;
    // Order matters: no new requests nor deliveries (those in flight finish), then no new device traffic, then the database.
    const stop = () =>
      (stopping ??= Promise.all([server.server.close(), deliveries.stop(), ctx.simulator.stop()])
        .then(() => broker.close())
        .then(() => {
          time?.stop();
          return store.close();
        }));
    const running: RunningServer = { app, ctx, url, port: address.port, portTaken, mqtt: { port: gateway.port, portTaken: mqtt.portTaken }, stop };
    options.running?.(running);
    app.server.log.info(
      { baseUrl: baseUrl(config), listening: url, mqttPort: gateway.port, region: config.region, phase: config.phase, version: config.version },
      `appliance-cloud ${config.mode} listening on ${url}, serving ${baseUrl(config)}`,
    );
    // After the line saying it runs, so a start that fails says only why.
    for (const warning of configWarnings(config)) app.server.log.warn(warning);
    return running;
  } catch (error) {
    await app?.server.close();
    await delivery?.stop();
    await simulator?.stop();
    await gateway?.close();
    time?.stop();
    await store.close();
    throw error;
  }
}

/**
 * SIGTERM or SIGINT drains the server and exits 0; a second signal while draining exits at once,
 * for an operator who does not want to wait for slow requests.
 */
export function installSignalHandlers(server: RunningServer): void {
  const log = server.app.server.log;
  let draining = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (draining) {
      log.warn({ signal }, 'second signal while draining: exiting now');
      process.exit(128 + constants.signals[signal]);
    }
    draining = true;
    log.info({ signal }, 'draining: no new connections or deliveries; finishing requests and delivery attempts in flight');
    server.stop().then(
      () => {
        log.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        log.error({ err: error }, 'failed to drain');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
