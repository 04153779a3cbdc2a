/** What the HTTP interfaces and the CLI are built on: settings, the store, the clock and the domain services. */
import type { Config } from './config.js';
import { Accounts } from './core/accounts.js';
import type { DeviceChannel } from './core/channel.js';
import { Devices } from './core/devices.js';
import { virtualChannel } from './sim/channel.js';
import type { Clock } from './ids.js';
import type { Store } from './store/store.js';

export interface AppContext {
  config: Config;
  store: Store;
  clock: Clock;
  devices: Devices;
  accounts: Accounts;
}

/** Wires the domain services over a store; the one place that chooses the device channels. */
export function createContext(config: Config, store: Store, clock: Clock, channels: { real: DeviceChannel }): AppContext {
  const devices = new Devices({
    store,
    clock,
    channels: { virtual: virtualChannel, real: channels.real },
    controlTimeoutMs: config.controlTimeoutMs,
    virtualByDefault: config.virtualByDefault,
  });
  return { config, store, clock, devices, accounts: new Accounts({ store, clock }) };
}

/** Until the MQTT gateway exists (issue 5), a command for a real device has no way to reach it. */
export const noGateway: DeviceChannel = {
  async sendCommand(device) {
    return { ok: false, code: '2209', message: `No device gateway is running, so device ${device.deviceId} cannot be reached.` };
  },
};
