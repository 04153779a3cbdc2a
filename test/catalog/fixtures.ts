/** The reference data of reference/thinq/ as test fixtures: every folder, its documents, the washtower halves. */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { listReadable, type ListedProperty } from '../../src/catalog/index.js';
import type { DeviceStatus, JsonObject, ParsedProfile } from '../../src/catalog/types.js';
import { isObject } from '../../src/catalog/values.js';

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
 * The readable properties a status shows: every one, except that a resource of entries the status
 * shows as one object (an oven's `temperature`, in the unit displayed) shows only that entry.
 */
export function shownReadable(profile: ParsedProfile, status: DeviceStatus): ListedProperty[] {
  return listReadable(profile).filter((item) => {
    const entry = item.address.entry;
    const part = Array.isArray(status) ? status.find((e) => isObject(e.location) && e.location.locationName === item.address.location) : status;
    const shown = part?.[item.resource];
    return !entry || !isObject(shown) || shown[entry.key] === entry.name;
  });
}

/**
 * The reference documents of each catalog type, by device name of `devicesOf`: its own folder and,
 * for the washtower halves, the matching half of DEVICE_WASHTOWER (one device holding both).
 */
export const DOCUMENTS_OF_TYPE: Readonly<Record<string, readonly string[]>> = {
  DEVICE_REFRIGERATOR: ['refrigerator'],
  DEVICE_WASHER: ['washer'],
  DEVICE_DRYER: ['dryer'],
  DEVICE_AIR_CONDITIONER: ['air_conditioner'],
  DEVICE_AIR_PURIFIER: ['air_purifier'],
  DEVICE_ROBOT_CLEANER: ['robot_cleaner'],
  DEVICE_OVEN: ['oven'],
  DEVICE_DISH_WASHER: ['dish_washer'],
  DEVICE_STYLER: ['styler'],
  DEVICE_WATER_PURIFIER: ['water_purifier'],
  DEVICE_DEHUMIDIFIER: ['dehumidifier'],
  DEVICE_CEILING_FAN: ['ceiling_fan'],
  DEVICE_WASHTOWER_WASHER: ['washtower_washer', 'washtower#washer'],
  DEVICE_WASHTOWER_DRYER: ['washtower_dryer', 'washtower#dryer'],
};

/** Folders of types the catalog does not serve (DESIGN A.6 names its twelve types and the washtower halves). */
export const NOT_SERVED: readonly string[] = ['hood', 'kimchi_refrigerator', 'washcombo_main', 'washcombo_mini'];

/** One device's document of `devicesOf` by its name (`washtower#dryer` for a half), or undefined when the folder lacks the file. */
export function documentOf(name: string, file: string): unknown {
  const [folder = ''] = name.split('#');
  if (!hasFile(folder, file)) return undefined;
  return devicesOf(folder, file).find((d) => d.name === name)?.document;
}
