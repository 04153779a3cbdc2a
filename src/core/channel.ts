/** How a command reaches a device and how its answer comes back (DESIGN A.7.3, B). */
import type { DeviceStatus, JsonObject } from '../catalog/types.js';
import type { ErrorCode } from '../errors.js';
import type { Device } from '../store/store.js';

export type CommandOutcome =
  | { ok: true; status: DeviceStatus }
  | { ok: false; code: ErrorCode; message: string };

export interface DeviceChannel {
  /** Sends a validated command; resolves with the device's full status after it, or its refusal. */
  sendCommand(device: Device, status: DeviceStatus, command: JsonObject, timeoutMs: number): Promise<CommandOutcome>;
}
