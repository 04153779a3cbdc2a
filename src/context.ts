/** What the HTTP interfaces and the CLI are built on: settings, the store, the clock and the domain services. */
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { ConfigError, type Config } from './config.js';
import { Accounts, type CallbackGuard } from './core/accounts.js';
import { LookupCache } from './core/cache.js';
import { ChannelRouter } from './core/channel.js';
import { Devices } from './core/devices.js';
import { Owners } from './core/owners.js';
import { Subscriptions } from './core/subscriptions.js';
import { createAddressGuard } from './delivery/address-guard.js';
import { randomId, type Clock } from './ids.js';
import { createLog } from './logging.js';
import type { Scheduler } from './sim/scheduler.js';
import { Simulator, type SimulatorSharing } from './sim/simulator.js';
import type { Store } from './store/store.js';

export interface AppContext {
  config: Config;
  store: Store;
  clock: Clock;
  devices: Devices;
  accounts: Accounts;
  /** Owners' logins and consents (DESIGN G). */
  owners: Owners;
  /** What the partner checks look up, cached; Devices and Accounts tell it of their changes. */
  lookups: LookupCache;
  subscriptions: Subscriptions;
  /** Where Devices sends commands; the gateway's channel is attached to it once the gateway runs. */
  channels: ChannelRouter;
  /** Virtual appliances, in a context that runs them (a server's; not the admin CLI's). */
  simulator: Simulator | null;
}

/** A context that runs virtual appliances: what a server, and so its HTTP app, is built on. */
export type ContextWithSimulator = AppContext & { simulator: Simulator };

/** Where the simulator's minutes come from: timers in a server; tests pass a manual one. */
export interface SimulatorOptions {
  scheduler: Scheduler;
  /** Where a failed minute is told: the process's JSON log (DESIGN E) at config.logLevel unless given. */
  log?: Pick<Logger, 'error'>;
}

/**
 * Wires the domain services over a store, with their lookup cache and the one channel router; with
 * `sim`, also a simulator, attached to the router as the channel of virtual appliances.
 */
export function createContext(config: Config, store: Store, clock: Clock): AppContext;
export function createContext(config: Config, store: Store, clock: Clock, sim: SimulatorOptions): ContextWithSimulator;
export function createContext(config: Config, store: Store, clock: Clock, sim?: SimulatorOptions): AppContext {
  const lookups = new LookupCache(store);
  const channels = new ChannelRouter();
  const devices = new Devices({
    store,
    clock,
    lookups,
    channel: channels,
    controlTimeoutMs: config.controlTimeoutMs,
    virtualByDefault: config.virtualByDefault,
  });
  const accounts = new Accounts({ store, clock, region: config.region, phase: config.phase, lookups, checkCallbackUrl: callbackGuard(config) });
  const owners = new Owners({ store, clock, accounts, devices, lookups });
  const subscriptions = new Subscriptions({ store, clock, eventSubscriptionLimit: config.eventSubscriptionLimit, lookups });
  const simulator = sim ? createSimulator(config, store, clock, devices, sim.scheduler, sim.log ?? createLog(config.logLevel).logger) : null;
  if (simulator) channels.attach('virtual', simulator);
  return { config, store, clock, devices, accounts, owners, subscriptions, lookups, channels, simulator };
}

function createSimulator(config: Config, store: Store, clock: Clock, devices: Devices, scheduler: Scheduler, log: Pick<Logger, 'error'>): Simulator {
  return new Simulator({
    devices,
    listVirtualDevices: () => store.listVirtualDevices(),
    listUserDevices: (userNumber) => store.listUserDevices(userNumber),
    clock,
    scheduler,
    timeScale: config.simTimeScale,
    timeScaleSet: config.simTimeScaleSet,
    onError: (error, deviceId) =>
      log.error({ err: error, deviceId }, deviceId === '*' ? 'Simulator: the virtual appliances or its turn could not be read' : 'Simulator: a minute of the device failed'),
    sharing: simulatorSharing(store),
  });
}

const SIM_TURN = 'simulator';
const SIM_TIME_SCALE = 'sim time scale';

/** The nodes on the store take turns to step the appliances (a lease) and share the time scale (sim/simulator.ts). */
function simulatorSharing(store: Store): SimulatorSharing {
  const node = `${hostname()}:${process.pid}:${randomId(6)}`;
  return {
    holdTurn: (ttlMs) => store.holdLease(SIM_TURN, node, ttlMs),
    giveTurnUp: () => store.releaseLease(SIM_TURN, node),
    readScale: async () => {
      const stored = await store.readSharedSetting(SIM_TIME_SCALE);
      return stored === null ? null : Number(stored);
    },
    writeScale: (scale) => store.writeSharedSetting(SIM_TIME_SCALE, String(scale)),
  };
}

/** Callback URLs are judged when set as the deliveries judge them; a malformed allow-list stops the start. */
function callbackGuard(config: Config): CallbackGuard {
  try {
    return createAddressGuard({ phase: config.phase, allowList: config.deliveryAllowList }).checkSetting;
  } catch (error) {
    throw new ConfigError(`DELIVERY_ALLOW_LIST: ${error instanceof Error ? error.message : String(error)}`);
  }
}
