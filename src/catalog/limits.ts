/**
 * The bound on a device's stored status (DESIGN J). Reports may carry properties the profile does
 * not declare, as real devices do; without a bound one device could grow its status, and every
 * partner read of it, without end. Pure.
 */
import type { DeviceStatus } from './types.js';

/** At most 32 KiB of JSON text, in UTF-8 bytes as stored and served. */
export const MAX_STATUS_BYTES = 32 * 1024;

/** At most 8 levels of objects and arrays, the status itself being the first: the deepest catalog status has 4. */
export const MAX_STATUS_DEPTH = 8;

/** Whether a JSON value nests objects and arrays more than `levels` deep; it looks no deeper than that. */
export function nestsDeeperThan(value: unknown, levels: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (levels === 0) return true;
  return Object.values(value).some((child) => nestsDeeperThan(child, levels - 1));
}

/** What puts a status over the bound, naming the limit; null when it is within. */
export function statusOverBound(status: DeviceStatus): string | null {
  if (nestsDeeperThan(status, MAX_STATUS_DEPTH)) {
    return `the status would nest more than ${MAX_STATUS_DEPTH} levels deep; a device's status is at most ${MAX_STATUS_DEPTH} levels deep`;
  }
  const bytes = Buffer.byteLength(JSON.stringify(status));
  if (bytes > MAX_STATUS_BYTES) {
    return `the status would be ${bytes} bytes of JSON; a device's status is at most ${MAX_STATUS_BYTES} bytes (32 KiB)`;
  }
  return null;
}
