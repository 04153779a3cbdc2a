/**
 * A model's status at registration: every readable property of its profile with a value the
 * profile allows, taken from a reference status where valid and filled from the profile otherwise,
 * then the sandbox values that let a partner control it (remote control on, idle, powered on).
 */
import { initialValue } from './properties.js';
import { showsOneUnit } from './status.js';
import type { DeviceStatus, JsonObject, ParsedProfile, Property, RangeValue, Resource, ResourceEntry, ResourceSet } from './types.js';
import { inRange, isObject, valueProblem } from './values.js';

/** Every sandbox appliance accepts remote control unless a test says otherwise. */
const SANDBOX_DEFAULTS: Readonly<Record<string, unknown>> = { 'remoteControlEnable.remoteControlEnabled': true };

function entriesOf(value: unknown): JsonObject[] {
  return (Array.isArray(value) ? value : [value]).filter(isObject);
}

/** The legal value nearest a reported number, e.g. a fridge at 8 whose range stops at 7. */
function nearestInRange(range: RangeValue, value: number): number | undefined {
  const clamped = Math.min(Math.max(value, range.min), range.max);
  const stepped = range.min + Math.floor((clamped - range.min) / range.step + 1e-9) * range.step;
  return inRange(range, stepped) ? stepped : undefined;
}

/** `name` decides too: a relative timer reported at 0 (none set) is valid below its range, as in a report. */
function startingValue(name: string, property: Property, reported: unknown): unknown {
  if (reported !== undefined && valueProblem(name, property, reported, 'r') === null) return reported;
  if (property.type === 'range' && property.read && typeof reported === 'number') {
    return nearestInRange(property.read, reported) ?? initialValue(property);
  }
  return initialValue(property);
}

function fillProperties(keys: string[], properties: Resource, reported: JsonObject, sandbox: Readonly<Record<string, unknown>>): JsonObject {
  const out: JsonObject = {};
  for (const [name, property] of Object.entries(properties)) {
    if (!property.readable) continue;
    const key = keys.map((k) => `${k}.${name}`).find((k) => k in sandbox);
    if (key === undefined) {
      out[name] = startingValue(name, property, reported[name]);
      continue;
    }
    const problem = valueProblem(name, property, sandbox[key], 'r');
    if (problem) throw new Error(`Catalog sandbox value ${key} does not fit the profile: ${problem}`);
    out[name] = sandbox[key];
  }
  return out;
}

function fillSet(set: ResourceSet, reported: JsonObject, sandbox: Readonly<Record<string, unknown>>): JsonObject {
  const out: JsonObject = {};
  for (const [resource, properties] of Object.entries(set.resources)) {
    const body = fillProperties([resource], properties, isObject(reported[resource]) ? reported[resource] : {}, sandbox);
    if (Object.keys(body).length) out[resource] = body;
  }
  for (const [resource, entries] of Object.entries(set.arrays)) {
    const given = entriesOf(reported[resource]);
    const fill = ({ key, name, properties }: ResourceEntry): JsonObject => {
      const match = given.find((e) => e[key] === name) ?? {};
      // An entry-specific sandbox key wins over the resource-wide one.
      return { [key]: name, ...fillProperties([`${resource}[${name}]`, resource], properties, match, sandbox) };
    };
    const first = entries[0] as ResourceEntry;
    if (showsOneUnit(resource, first.key)) {
      // The unit the reference shows, else the profile's first.
      out[resource] = fill(entries.find((e) => given.some((g) => g[e.key] === e.name)) ?? first);
    } else out[resource] = entries.map(fill);
  }
  return out;
}

/** The default status of a profile, starting from `reference` (a status in any of LG's shapes) and `sandbox` values. */
export function buildDefaultStatus(profile: ParsedProfile, reference: unknown, sandbox: Readonly<Record<string, unknown>> = {}): DeviceStatus {
  const values = { ...SANDBOX_DEFAULTS, ...sandbox };
  if (!profile.locations) return fillSet(profile.root as ResourceSet, isObject(reference) ? reference : {}, values);
  const reported = entriesOf(reference);
  const single = profile.locations.length === 1;
  return profile.locations.map(({ name, set }) => {
    const match = reported.find((e) => isObject(e.location) && e.location.locationName === name) ?? (single ? reported[0] : undefined);
    return { location: { locationName: name }, ...fillSet(set, match ?? {}, values) };
  });
}
