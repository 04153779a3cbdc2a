/** The reference data of reference/thinq/ as test fixtures: every folder, its documents, the washtower halves. */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { listReadable, valueAt, type ListedProperty } from '../../src/catalog/index.js';
import { showsOneUnit } from '../../src/catalog/status.js';
import type { DeviceStatus, JsonObject, ParsedProfile } from '../../src/catalog/types.js';

const ROOT = fileURLToPath(new URL('../../reference/thinq/', import.meta.url));

/** Every appliance folder of the reference data, including types the catalog does not serve. */
export const FOLDERS: readonly string[] = readdirSync(ROOT)
  .filter((f) => !f.startsWith('_') && statSync(`${ROOT}${f}`).isDirectory())
  .sort();

export function hasFile(folder: string, file: string): boolean {
  return existsSync(`${ROOT}${folder}/${file}`);
}

export function readJson(folder: string, file: string): unknown {
  return JSON.parse(readFileSync(`${ROOT}${folder}/${file}`, 'utf8'));
}

/**
 * The documents of a folder as one or more devices. DEVICE_WASHTOWER (one device, both halves) wraps
 * profile, status and command in `{washer, dryer}`; each half follows the plain grammar, so it is
 * checked as a device of its own, named `washtower#washer` and `washtower#dryer`.
 */
export function devicesOf(folder: string, file: string): { name: string; document: unknown }[] {
  const document = readJson(folder, file);
  if (folder !== 'washtower') return [{ name: folder, document }];
  const halves = document as JsonObject;
  return Object.keys(halves).map((half) => ({ name: `${folder}#${half}`, document: halves[half] }));
}

/** The profile that goes with a device of `devicesOf`. */
export function profileOf(folder: string, name: string, file: string): JsonObject {
  const profile = readJson(folder, file) as JsonObject;
  const half = name.split('#')[1];
  return (half === undefined ? profile : profile[half]) as JsonObject;
}

/**
 * The readable properties a status shows: every one, except that a one-unit resource (an oven's
 * `temperature`) shows only the entry of the unit the appliance displays.
 */
export function shownReadable(profile: ParsedProfile, status: DeviceStatus): ListedProperty[] {
  return listReadable(profile).filter((item) => {
    const entry = item.address.entry;
    return !entry || !showsOneUnit(item.resource, entry.key) || valueAt(status, { ...item, name: entry.key }) !== undefined;
  });
}
