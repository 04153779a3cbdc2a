/**
 * The ThinQ profile grammar (DESIGN A.6, reference/thinq/NOTES.md section a) parsed into typed
 * values. The profile itself is served exactly as stored; this parse is what validation and the
 * simulator read. A profile that does not fit the grammar is refused with a clear Error.
 */
import type { AddressKey, JsonObject, ParsedProfile, Property, RangeValue, Resource, ResourceEntry, ResourceSet } from './types.js';
import { isObject, nameMap, show } from './values.js';

class ProfileError extends Error {
  constructor(path: string, problem: string) {
    super(`Profile does not fit the ThinQ grammar: ${path} ${problem}`);
    this.name = 'ProfileError';
  }
}

/** Parses a profile: an object of resources, or an array of locations keyed by `location.locationName`. */
export function parseProfile(profile: JsonObject): ParsedProfile {
  if (!isObject(profile)) throw new ProfileError('the profile', 'must be a JSON object');
  const { property } = profile;
  const parsed: ParsedProfile = {
    locations: null,
    root: null,
    pushCodes: parsePushCodes(profile.notification),
    errors: stringList(profile.error ?? [], 'error'),
  };
  if (Array.isArray(property)) parsed.locations = parseLocations(property);
  else if (isObject(property)) parsed.root = parseResourceSet(property, 'property');
  else throw new ProfileError('property', `must be an object of resources or an array of locations; got ${show(property)}`);
  return parsed;
}

function parsePushCodes(notification: unknown): string[] {
  if (notification === undefined) return [];
  if (!isObject(notification)) throw new ProfileError('notification', `must be an object; got ${show(notification)}`);
  return stringList(notification.push ?? [], 'notification.push');
}

function stringList(value: unknown, path: string): string[] {
  if (!Array.isArray(value) || !value.every((x) => typeof x === 'string')) {
    throw new ProfileError(path, `must be an array of strings; got ${show(value)}`);
  }
  return value;
}

function parseLocations(entries: unknown[]): { name: string; set: ResourceSet }[] {
  if (entries.length === 0) throw new ProfileError('property', 'is an empty array of locations');
  const locations = entries.map((entry, i) => {
    const path = `property[${i}]`;
    if (!isObject(entry)) throw new ProfileError(path, `must be an object; got ${show(entry)}`);
    const { location, ...resources } = entry;
    const name = isObject(location) ? location.locationName : undefined;
    if (typeof name !== 'string') throw new ProfileError(`${path}.location.locationName`, `must be a string; got ${show(name)}`);
    return { name, set: parseResourceSet(resources, path) };
  });
  rejectDuplicates(locations.map((l) => l.name), 'property[].location.locationName');
  return locations;
}

function rejectDuplicates(names: string[], path: string): void {
  const duplicate = names.find((name, i) => names.indexOf(name) !== i);
  if (duplicate !== undefined) throw new ProfileError(path, `names ${show(duplicate)} twice`);
}

/** Resources and properties are kept in name maps: commands and reports look names up in them. */
function parseResourceSet(resources: JsonObject, path: string): ResourceSet {
  const set: ResourceSet = { resources: nameMap(), arrays: nameMap() };
  for (const [name, value] of Object.entries(resources)) {
    if (Array.isArray(value)) set.arrays[name] = parseEntries(value, `${path}.${name}`);
    else if (isObject(value)) set.resources[name] = parseResource(value, `${path}.${name}`);
    else throw new ProfileError(`${path}.${name}`, `must be a resource object or an array of entries; got ${show(value)}`);
  }
  return set;
}

function parseResource(properties: JsonObject, path: string): Resource {
  const resource: Resource = nameMap();
  for (const [name, value] of Object.entries(properties)) resource[name] = parseProperty(value, `${path}.${name}`);
  return resource;
}

/** Entries of a multi-location resource, each keyed by its literal `locationName` or else its literal `unit`. */
function parseEntries(entries: unknown[], path: string): ResourceEntry[] {
  if (entries.length === 0) throw new ProfileError(path, 'is an empty array of entries');
  const parsed = entries.map((entry, i) => {
    if (!isObject(entry)) throw new ProfileError(`${path}[${i}]`, `must be an object; got ${show(entry)}`);
    const key: AddressKey | undefined = typeof entry.locationName === 'string' ? 'locationName' : typeof entry.unit === 'string' ? 'unit' : undefined;
    if (!key) throw new ProfileError(`${path}[${i}]`, 'has neither a literal locationName nor a literal unit to address it by');
    const { [key]: name, ...properties } = entry;
    return { key, name: name as string, properties: parseResource(properties, `${path}[${i}]`) };
  });
  const first = parsed[0] as ResourceEntry;
  if (parsed.some((e) => e.key !== first.key)) throw new ProfileError(path, 'mixes entries keyed by locationName and by unit');
  rejectDuplicates(parsed.map((e) => e.name), `${path}[].${first.key}`);
  return parsed;
}

/** A descriptor, or a plain literal standing for a fixed read-only value. */
function parseProperty(value: unknown, path: string): Property {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return { type: 'fixed', readable: true, writable: false, value };
  }
  if (!isObject(value)) throw new ProfileError(path, `must be a property descriptor or a literal; got ${show(value)}`);
  const { mode, type } = value;
  if (!Array.isArray(mode) || mode.length === 0 || !mode.every((m) => m === 'r' || m === 'w')) {
    throw new ProfileError(`${path}.mode`, `must be a non-empty array of "r" and "w"; got ${show(mode)}`);
  }
  const readable = mode.includes('r');
  const writable = mode.includes('w');
  const values = value.value === undefined ? {} : value.value;
  if (!isObject(values)) throw new ProfileError(`${path}.value`, `must be an object; got ${show(values)}`);
  const unit = typeof value.unit === 'string' ? { unit: value.unit } : {};
  switch (type) {
    case 'enum':
    case 'list':
    case 'array': {
      const read = readable ? stringList(values.r, `${path}.value.r`) : [];
      const write = writable ? stringList(values.w, `${path}.value.w`) : [];
      return { type: type === 'enum' ? 'enum' : 'list', readable, writable, read, write, ...unit };
    }
    case 'range': {
      // A side LG leaves out (AC coolTargetTemperature is write-only) borrows the other side's bounds.
      const read = readable ? parseRange(values.r ?? values.w, `${path}.value.r`) : null;
      const write = writable ? parseRange(values.w ?? values.r, `${path}.value.w`) : null;
      return { type, readable, writable, read, write, ...unit };
    }
    case 'boolean':
    case 'bool':
      return { type: 'boolean', readable, writable, ...unit };
    case 'number':
    case 'string':
      return { type, readable, writable, ...unit };
    default:
      throw new ProfileError(`${path}.type`, `must be one of enum, range, boolean, number, string, list; got ${show(type)}`);
  }
}

/** A range; `step` defaults to 1 when missing (the dryer profile omits it), `except` to none. */
function parseRange(value: unknown, path: string): RangeValue {
  if (!isObject(value)) throw new ProfileError(path, `must be a range {min, max, step}; got ${show(value)}`);
  const { min, max, step = 1, except = [] } = value;
  const finite = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
  if (!finite(min) || !finite(max) || min > max) throw new ProfileError(path, `must have numbers min <= max; got ${show(value)}`);
  if (!finite(step) || step <= 0) throw new ProfileError(`${path}.step`, `must be a positive number; got ${show(step)}`);
  if (!Array.isArray(except) || !except.every(finite)) throw new ProfileError(`${path}.except`, `must be an array of numbers; got ${show(except)}`);
  return { min, max, step, except };
}
