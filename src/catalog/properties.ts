/**
 * Walking a parsed profile property by property: what is readable, what is writable, which values
 * are legal, and the command or status position that addresses each one. Pure; tests and the
 * sandbox iterate the catalog through these.
 */
import type { AddressKey, DeviceStatus, JsonObject, ParsedProfile, Property, RangeValue, ResourceSet } from './types.js';
import { type Access, inRange, isObject } from './values.js';

/** Where a property sits: its location (whole-profile arrays) and its entry (multi-location resources). */
export interface PropertyAddress {
  location?: string;
  entry?: { key: AddressKey; name: string };
}

export interface ListedProperty {
  /** A readable label, e.g. `temperatureInUnits[locationName=FRIDGE].targetTemperatureC` or `MAIN/operation.washerOperationMode`. */
  path: string;
  resource: string;
  name: string;
  property: Property;
  address: PropertyAddress;
}

/** The resource sets of a profile with the location each belongs to. */
export function resourceSets(profile: ParsedProfile): { location?: string; set: ResourceSet }[] {
  if (profile.locations) return profile.locations.map((l) => ({ location: l.name, set: l.set }));
  return profile.root ? [{ set: profile.root }] : [];
}

/** Every property of a profile, in profile order. */
export function listProperties(profile: ParsedProfile): ListedProperty[] {
  const listed: ListedProperty[] = [];
  for (const { location, set } of resourceSets(profile)) {
    const prefix = location === undefined ? '' : `${location}/`;
    const at = location === undefined ? {} : { location };
    for (const [resource, properties] of Object.entries(set.resources)) {
      for (const [name, property] of Object.entries(properties)) {
        listed.push({ path: `${prefix}${resource}.${name}`, resource, name, property, address: at });
      }
    }
    for (const [resource, entries] of Object.entries(set.arrays)) {
      for (const { key, name: entryName, properties } of entries) {
        for (const [name, property] of Object.entries(properties)) {
          const path = `${prefix}${resource}[${key}=${entryName}].${name}`;
          listed.push({ path, resource, name, property, address: { ...at, entry: { key, name: entryName } } });
        }
      }
    }
  }
  return listed;
}

export function listWritable(profile: ParsedProfile): ListedProperty[] {
  return listProperties(profile).filter((p) => p.property.writable);
}

export function listReadable(profile: ParsedProfile): ListedProperty[] {
  return listProperties(profile).filter((p) => p.property.readable);
}

/** Profiles are parsed once per model and never change: asked on every control command, answered once each. */
const writable = new WeakMap<ParsedProfile, boolean>();

/** LG: "You can't control products that don't have controllable properties in the device profile." */
export function hasWritableProperty(profile: ParsedProfile): boolean {
  let known = writable.get(profile);
  if (known === undefined) {
    known = listProperties(profile).some((p) => p.property.writable);
    writable.set(profile, known);
  }
  return known;
}

/** Rounds away binary noise so 16 + 0.5 * 27 prints as 29.5. */
const tidy = (x: number): number => Number(x.toFixed(9));

/** The range's ends and a middle step, skipping excepted values. */
function rangeSamples(range: RangeValue): number[] {
  const steps = Math.floor((range.max - range.min) / range.step + 1e-9);
  const candidates = [0, Math.round(steps / 2), steps].map((n) => tidy(range.min + n * range.step));
  const legal = [...new Set(candidates)].filter((v) => inRange(range, v));
  if (legal.length) return legal;
  // Every sample was excepted: fall back to the first step that is not.
  for (let n = 0; n <= steps; n++) if (inRange(range, tidy(range.min + n * range.step))) return [tidy(range.min + n * range.step)];
  return [];
}

/**
 * Legal values of a property on one side: each enum value, range ends and a middle step, both
 * booleans, a few numbers, the whole list, the fixed value.
 */
export function legalValues(property: Property, access: Access = 'w'): unknown[] {
  switch (property.type) {
    case 'enum':
      return [...(access === 'w' ? property.write : property.read)];
    case 'range': {
      const range = access === 'w' ? property.write : property.read;
      return range ? rangeSamples(range) : [];
    }
    case 'boolean':
      return [true, false];
    case 'number':
      return [0, 1, 30];
    case 'string':
      return ['sandbox'];
    case 'list':
      return [[...(access === 'w' ? property.write : property.read)], []];
    case 'fixed':
      return [property.value];
  }
}

/**
 * The first legal value a device could report: the start of a default status. A timer's flag reads
 * UNSET, not SET because SET comes first in its list: no timer is set on a device fresh from the box.
 */
export function initialValue(property: Property): unknown {
  if (property.type === 'enum' && property.read.includes('UNSET')) return 'UNSET';
  if (property.type === 'boolean') return false;
  if (property.type === 'number') return 0;
  if (property.type === 'string') return '';
  if (property.type === 'list') return [];
  return legalValues(property, 'r')[0];
}

/** A control command setting one property, with the addressing keys its position needs. */
export function commandFor(item: ListedProperty, value: unknown): JsonObject {
  const { entry, location } = item.address;
  const body: JsonObject = entry ? { [entry.key]: entry.name, [item.name]: value } : { [item.name]: value };
  const command: JsonObject = { [item.resource]: body };
  return location === undefined ? command : { location: { locationName: location }, ...command };
}

/** The value a status holds for a listed property, or undefined when it holds none. */
export function valueAt(status: DeviceStatus, item: ListedProperty): unknown {
  const { entry, location } = item.address;
  const part = Array.isArray(status)
    ? status.find((e) => isObject(e.location) && e.location.locationName === location)
    : status;
  const resource = part?.[item.resource];
  if (!entry) return isObject(resource) ? resource[item.name] : undefined;
  const entries: unknown[] = Array.isArray(resource) ? resource : [resource];
  const found = entries.find((e) => isObject(e) && e[entry.key] === entry.name);
  return isObject(found) ? found[item.name] : undefined;
}
