/** How a command reaches a device and how its answer comes back (DESIGN A.7.3, B). */
import type { DeviceStatus, JsonObject } from '../catalog/types.js';
import type { ErrorCode } from '../errors.js';
import type { Device } from './model.js';

export type CommandOutcome =
  /**
   * `status`: the status sent, with the device's answer in it. `answered`: the values the device
   * answered, which win over a report stored while it answered (null: none to apply again). `report`:
   * what changed from the status sent, where the channel worked it out (the simulator does).
   */
  | { ok: true; status: DeviceStatus; answered: DeviceStatus | null; report?: DeviceStatus | null }
  | { ok: false; code: ErrorCode; message: string };

export interface DeviceChannel {
  /** Sends a validated command; resolves with the device's full status after it, or its refusal. */
  sendCommand(device: Device, status: DeviceStatus, command: JsonObject, timeoutMs: number): Promise<CommandOutcome>;
}

/** A device answered by the simulator in this process, or one that speaks MQTT through the gateway. */
export type DeviceKind = 'virtual' | 'real';

/** Why a command finds no channel for its device's kind. */
const NO_CHANNEL: Record<DeviceKind, string> = {
  virtual: 'No simulator runs in this process',
  real: 'The device gateway has not started',
};

/** A channel that answers every command as for a device that does not answer (2209), saying why. */
export function unreachable(why: string): DeviceChannel {
  return {
    async sendCommand(device) {
      return { ok: false, code: '2209', message: `${why}, so device ${device.deviceId} cannot be reached.` };
    },
  };
}

/**
 * The one channel Devices sends through: a virtual device's command goes to the simulator, a real
 * one's to the MQTT gateway. Each is attached once it exists (the gateway starts after Devices,
 * which it feeds); until then, or in a process without one, a command is answered 2209.
 */
export class ChannelRouter implements DeviceChannel {
  readonly #channels = new Map<DeviceKind, DeviceChannel>();

  /** Commands for devices of this kind go to `channel` from now on. */
  attach(kind: DeviceKind, channel: DeviceChannel): void {
    this.#channels.set(kind, channel);
  }

  sendCommand(device: Device, status: DeviceStatus, command: JsonObject, timeoutMs: number): Promise<CommandOutcome> {
    const kind: DeviceKind = device.virtual ? 'virtual' : 'real';
    const channel = this.#channels.get(kind) ?? unreachable(NO_CHANNEL[kind]);
    return channel.sendCommand(device, status, command, timeoutMs);
  }
}
