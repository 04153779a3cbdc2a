/**
 * Status arithmetic in status shape: a report applied to a status, and the changed part between
 * two statuses (the `report` of a DEVICE_STATUS event, DESIGN A.8). Pure. Entries of multi-location
 * resources match by their `locationName`/`unit`, location entries by `location.locationName`.
 */
import type { AddressKey, DeviceStatus, JsonObject, ParsedProfile, ResourceSet } from './types.js';
import { cloneJson, deepEqual, isObject, nameMap, own } from './values.js';

const NO_RESOURCES: ResourceSet = { resources: nameMap(), arrays: nameMap() };

/**
 * Where a status shows the device's current error: LG's `error`, one of the profile's `error` codes,
 * beside the resources (in each location entry of a device with locations), and only while there is
 * one. A report clears it with `"error": null`, and the change that clears it carries that null.
 */
export const ERROR_KEY = 'error';

/**
 * Whether the status shows a multi-entry resource as one object: the entry in the unit the
 * appliance displays. A profile keys entries by unit when each unit has its own range; LG's statuses
 * then carry one of them, `{"targetTemperature": 350, "unit": "F"}` (oven `temperature`), except for
 * the resources named for carrying every unit (`temperatureInUnits`, `twoSetTemperatureInUnits`).
 */
export function showsOneUnit(resource: string, key: AddressKey | undefined): boolean {
  return key === 'unit' && !resource.endsWith('InUnits');
}

/** A status part given as one object or as an array of entries. */
function asEntries(value: unknown): JsonObject[] {
  return (Array.isArray(value) ? value : [value]).filter(isObject);
}

function asObject(value: unknown): JsonObject {
  return isObject(value) ? value : {};
}

function locationOf(entry: JsonObject): unknown {
  return isObject(entry.location) ? entry.location.locationName : undefined;
}

/** The location name an entry belongs to; a device with one location may leave it out. */
function locationNamer(profile: ParsedProfile): (entry: JsonObject) => unknown {
  const only = profile.locations?.length === 1 ? profile.locations[0]?.name : undefined;
  return (entry) => locationOf(entry) ?? only;
}

function setOf(profile: ParsedProfile, name: unknown): ResourceSet {
  return profile.locations?.find((l) => l.name === name)?.set ?? NO_RESOURCES;
}

function mergeEntries(key: string, only: string | undefined, base: unknown, report: unknown): JsonObject[] {
  const merged = base === undefined ? [] : asEntries(base);
  for (const part of asEntries(report)) {
    const name = part[key] ?? only;
    const i = merged.findIndex((e) => (e[key] ?? only) === name);
    const entry = { ...(i >= 0 ? merged[i] : {}), ...part, ...(name === undefined ? {} : { [key]: name }) };
    if (i >= 0) merged[i] = entry;
    else merged.push(entry);
  }
  return merged;
}

/** A report in the unit shown updates the entry; one in another unit replaces it: the display switched. */
function mergeShown(previous: unknown, report: unknown): JsonObject {
  const part = asObject(report);
  const shown = asEntries(previous).find((e) => e.unit === part.unit) ?? {};
  return { ...shown, ...part };
}

function mergeSet(set: ResourceSet, base: JsonObject, report: JsonObject): JsonObject {
  // A name map while resources are set by name: a reported `__proto__` is a key like any other.
  const out: JsonObject = Object.assign(nameMap(), base);
  for (const [resource, value] of Object.entries(report)) {
    const entries = set.arrays[resource];
    const previous = out[resource];
    if (resource === ERROR_KEY && value === null) delete out[resource];
    else if (entries && showsOneUnit(resource, entries[0]?.key)) out[resource] = mergeShown(previous, value);
    else if (entries) {
      const only = entries.length === 1 ? entries[0]?.name : undefined;
      out[resource] = mergeEntries((entries[0] as { key: string }).key, only, previous, value);
    } else if (isObject(value) && isObject(previous)) out[resource] = { ...previous, ...value };
    else out[resource] = value;
  }
  return { ...out };
}

/** The status with a (validated) report applied; neither argument is modified. */
export function mergeStatus(profile: ParsedProfile, status: DeviceStatus, report: DeviceStatus): DeviceStatus {
  const [current, incoming] = [cloneJson(status), cloneJson(report)];
  if (!profile.locations) return mergeSet(profile.root ?? NO_RESOURCES, asObject(current), asObject(incoming));
  const nameOf = locationNamer(profile);
  const merged = asEntries(current);
  for (const part of asEntries(incoming)) {
    const name = nameOf(part);
    const addressed = name === undefined ? part : { ...part, location: { locationName: name } };
    const i = merged.findIndex((e) => nameOf(e) === name);
    const entry = mergeSet(setOf(profile, name), i >= 0 ? (merged[i] as JsonObject) : {}, addressed);
    if (i >= 0) merged[i] = entry;
    else merged.push(entry);
  }
  return merged;
}

function diffObject(before: JsonObject, after: JsonObject): JsonObject | null {
  const changed = Object.entries(after).filter(([k, v]) => !deepEqual(own(before, k), v));
  return changed.length ? cloneJson(Object.fromEntries(changed)) : null;
}

/** The changed part of a one-unit resource, with the unit it is in. */
function diffShown(before: unknown, after: unknown): JsonObject | null {
  const now = asObject(after);
  const old = isObject(before) && before.unit === now.unit ? before : {};
  const change = diffObject(old, now);
  return change && { ...change, unit: now.unit };
}

function diffSet(set: ResourceSet, before: JsonObject, after: JsonObject): JsonObject | null {
  // Set by name, as in mergeSet.
  const out: JsonObject = nameMap();
  for (const [resource, value] of Object.entries(after)) {
    const previous = own(before, resource);
    const key = set.arrays[resource]?.[0]?.key;
    if (showsOneUnit(resource, key)) {
      const change = diffShown(previous, value);
      if (change) out[resource] = change;
    } else if (key && (Array.isArray(value) || isObject(value))) {
      const changes: JsonObject[] = [];
      for (const entry of asEntries(value)) {
        const old = asEntries(previous).find((e) => e[key] === entry[key]) ?? {};
        const change = diffObject(old, entry);
        if (change) changes.push({ [key]: entry[key], ...change });
      }
      if (changes.length) out[resource] = changes;
    } else if (isObject(value) && isObject(previous)) {
      const change = diffObject(previous, value);
      if (change) out[resource] = change;
    } else if (!deepEqual(previous, value)) out[resource] = cloneJson(value);
  }
  if (own(before, ERROR_KEY) !== undefined && own(after, ERROR_KEY) === undefined) out[ERROR_KEY] = null;
  return Object.keys(out).length ? { ...out } : null;
}

/** Only what changed from `before` to `after`, in status shape with addressing keys kept; null when nothing did. */
export function diffStatus(profile: ParsedProfile, before: DeviceStatus, after: DeviceStatus): DeviceStatus | null {
  if (!profile.locations) return diffSet(profile.root ?? NO_RESOURCES, asObject(before), asObject(after));
  const nameOf = locationNamer(profile);
  const changes: JsonObject[] = [];
  for (const entry of asEntries(after)) {
    const name = nameOf(entry);
    const { location: _location, ...resources } = entry;
    const old = asEntries(before).find((e) => nameOf(e) === name) ?? {};
    const change = diffSet(setOf(profile, name), old, resources);
    if (change) changes.push({ location: { locationName: name }, ...change });
  }
  return changes.length ? changes : null;
}
