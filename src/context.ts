/** What the HTTP interfaces and the CLI are built on: settings, the store, the clock and the domain services. */
import { ConfigError, type Config } from './config.js';
import { Accounts, type CallbackGuard } from './core/accounts.js';
import type { DeviceChannel } from './core/channel.js';
import { Devices } from './core/devices.js';
import { Subscriptions } from './core/subscriptions.js';
import { createAddressGuard } from './delivery/address-guard.js';
import type { Clock } from './ids.js';
import { type Scheduler, timerScheduler } from './sim/scheduler.js';
import { Simulator } from './sim/simulator.js';
import type { Store } from './store/store.js';

export interface AppContext {
  config: Config;
  store: Store;
  clock: Clock;
  devices: Devices;
  accounts: Accounts;
  subscriptions: Subscriptions;
  /** Virtual appliances: their command channel, and a clock loop the server starts and stops. */
  simulator: Simulator;
}

/**
 * Wires the domain services over a store; the one place that chooses the device channels. The
 * simulator's minutes come from `sim.scheduler` (timers by default; tests pass a manual one).
 */
export function createContext(config: Config, store: Store, clock: Clock, channels: { real: DeviceChannel }, sim: { scheduler?: Scheduler } = {}): AppContext {
  // The simulator is both the virtual devices' channel and a client of Devices: the channel forwards to it.
  const virtual: DeviceChannel = { sendCommand: (device, status, command) => simulator.sendCommand(device, status, command) };
  const devices = new Devices({
    store,
    clock,
    channels: { virtual, real: channels.real },
    controlTimeoutMs: config.controlTimeoutMs,
    virtualByDefault: config.virtualByDefault,
  });
  const simulator = new Simulator({
    devices,
    listVirtualDevices: () => store.listVirtualDevices(),
    listUserDevices: (userNumber) => store.listUserDevices(userNumber),
    clock,
    scheduler: sim.scheduler ?? timerScheduler,
    timeScale: config.simTimeScale,
    onError: (error, deviceId) => console.error(`Simulator: a minute of device ${deviceId} failed:`, error),
  });
  const accounts = new Accounts({ store, clock, checkCallbackUrl: callbackGuard(config) });
  const subscriptions = new Subscriptions({ store, clock, eventSubscriptionLimit: config.eventSubscriptionLimit });
  return { config, store, clock, devices, accounts, subscriptions, simulator };
}

/** Callback URLs are judged when set as the deliveries judge them; a malformed allow-list stops the start. */
function callbackGuard(config: Config): CallbackGuard {
  try {
    return createAddressGuard({ phase: config.phase, allowList: config.deliveryAllowList }).checkUrl;
  } catch (error) {
    throw new ConfigError(`DELIVERY_ALLOW_LIST: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Until the MQTT gateway exists (issue 5), a command for a real device has no way to reach it. */
export const noGateway: DeviceChannel = {
  async sendCommand(device) {
    return { ok: false, code: '2209', message: `No device gateway is running, so device ${device.deviceId} cannot be reached.` };
  },
};
