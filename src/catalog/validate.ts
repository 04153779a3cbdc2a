/**
 * Control commands and device reports checked against a parsed profile (DESIGN A.6, codes of A.4).
 * Pure. A valid input comes back normalised: commands carry the addressing keys of the entry they
 * target; reports of whole-profile-array devices are arrays of location entries.
 */
import type { ErrorCode, Refusal } from '../errors.js';
import { hasWritableProperty } from './properties.js';
import { ERROR_KEY, showsOneUnit } from './status.js';
import type { DeviceStatus, JsonObject, ParsedProfile, Resource, ResourceEntry, ResourceSet, ValidationResult } from './types.js';
import { isObject, show, valueProblem } from './values.js';

export { mergeStatus, diffStatus } from './status.js';


const refuse = (code: ErrorCode, message: string): { ok: false; refusal: Refusal } => ({ ok: false, refusal: { code, message } });

/** The location a command or report entry addresses; `location` may be left out when the profile has only one. */
function pickLocation(profile: ParsedProfile, location: unknown, missingCode: ErrorCode): ValidationResult<{ name: string; set: ResourceSet }> {
  const locations = profile.locations ?? [];
  const names = locations.map((l) => l.name).join(', ');
  if (location !== undefined && !isObject(location)) {
    return refuse('1102', `location must be an object such as {"locationName": "${locations[0]?.name}"}; got ${show(location)}`);
  }
  const name = location?.locationName;
  if (name === undefined) {
    const only = locations.length === 1 ? locations[0] : undefined;
    return only ? { ok: true, value: only } : refuse(missingCode, `location.locationName is required: this device has locations ${names}`);
  }
  const found = locations.find((l) => l.name === name);
  return found ? { ok: true, value: found } : refuse('1102', `location.locationName must be one of ${names}; got ${show(name)}`);
}

/** The entry of a multi-location resource a body addresses by `locationName` or `unit`. */
function pickEntry(resource: string, entries: ResourceEntry[], body: JsonObject, missingCode: ErrorCode): ValidationResult<ResourceEntry> {
  const key = (entries[0] as ResourceEntry).key;
  const names = entries.map((e) => e.name).join(', ');
  const name = body[key];
  if (name === undefined) {
    const only = entries.length === 1 ? entries[0] : undefined;
    return only ? { ok: true, value: only } : refuse(missingCode, `${resource}.${key} is required: one of ${names}`);
  }
  const found = entries.find((e) => e.name === name);
  return found ? { ok: true, value: found } : refuse('1102', `${resource}.${key} must be one of ${names}; got ${show(name)}`);
}

/** A resource value given as one entry object or, as some clients send it, an array of one. */
function singleEntry(resource: string, value: unknown): ValidationResult<JsonObject> {
  if (isObject(value)) return { ok: true, value };
  if (Array.isArray(value) && value.length === 1 && isObject(value[0])) return { ok: true, value: value[0] };
  return refuse('1102', `${resource} must be one entry object; got ${show(value)}`);
}

/** Checks the writable properties a command sets in one resource or entry; returns how many it sets. */
function commandProperties(resource: string, properties: Resource, body: JsonObject, out: JsonObject, qualifiers: string[]): ValidationResult<number> {
  let count = 0;
  for (const [name, value] of Object.entries(body)) {
    const property = properties[name];
    if (!property) return refuse('2207', `Property "${resource}.${name}" is not in the profile of this device`);
    if (!property.writable) {
      // SDKs and LG's examples repeat an entry's read-only `unit` beside its locationName: accept it when it is true, drop it.
      if (qualifiers.includes(name)) {
        const problem = valueProblem(name, property, value, 'r');
        if (problem) return refuse('1102', problem);
        continue;
      }
      return refuse('2201', `${resource}.${name} is read-only`);
    }
    const problem = valueProblem(name, property, value, 'w');
    if (problem) return refuse('1102', problem);
    out[name] = value;
    count++;
  }
  return { ok: true, value: count };
}

/** Validates the resources of a command against one resource set; returns the number of properties set. */
function commandResources(set: ResourceSet, command: JsonObject, resources: string[], out: JsonObject): ValidationResult<number> {
  let count = 0;
  for (const resource of resources) {
    const body = command[resource];
    const entries = set.arrays[resource];
    const properties = set.resources[resource];
    let checked: ValidationResult<number>;
    if (entries) {
      const entryBody = singleEntry(resource, body);
      if (!entryBody.ok) return entryBody;
      const entry = pickEntry(resource, entries, entryBody.value, '1101');
      if (!entry.ok) return entry;
      const { key, name } = entry.value;
      const { [key]: _address, ...rest } = entryBody.value;
      const target: JsonObject = { [key]: name };
      checked = commandProperties(resource, entry.value.properties, rest, target, ['unit', 'locationName']);
      out[resource] = target;
    } else if (properties) {
      if (!isObject(body)) return refuse('1102', `${resource} must be an object of properties; got ${show(body)}`);
      const target: JsonObject = {};
      checked = commandProperties(resource, properties, body, target, []);
      out[resource] = target;
    } else {
      return refuse('2207', `Resource "${resource}" is not in the profile of this device`);
    }
    if (!checked.ok) return checked;
    count += checked.value;
  }
  return { ok: true, value: count };
}

/** DESIGN A.6/A.7.1: a control command is a partial status of writable properties plus addressing keys. */
export function validateCommand(profile: ParsedProfile, command: unknown): ValidationResult<JsonObject> {
  if (!isObject(command)) return refuse('1000', `The control command must be a JSON object; got ${Array.isArray(command) ? 'an array' : show(command)}`);
  if (!hasWritableProperty(profile)) return refuse('2207', 'This device cannot be controlled: its profile has no writable property');
  const addressing = profile.locations ? ['location'] : [];
  const resources = Object.keys(command).filter((k) => !addressing.includes(k));
  if (resources.length === 0) return refuse('1101', 'The control command is empty: it names no property to control');
  const out: JsonObject = {};
  let set = profile.root as ResourceSet;
  if (profile.locations) {
    const location = pickLocation(profile, command.location, '1101');
    if (!location.ok) return location;
    // locationName is all a location holds: another name is unknown (a typo would otherwise address the only location).
    const unknown = Object.keys(command.location ?? {}).find((name) => name !== 'locationName');
    if (unknown !== undefined) return refuse('2207', `Property "location.${unknown}" is not in the profile of this device`);
    out.location = { locationName: location.value.name };
    set = location.value.set;
  }
  const counted = commandResources(set, command, resources, out);
  if (!counted.ok) return counted;
  if (counted.value === 0) return refuse('1101', 'The control command is empty: it names no property to control');
  return { ok: true, value: out };
}

/** Checks reported values of declared properties; undeclared ones are kept, as real devices send extras. */
function reportProperties(resource: string, properties: Resource, body: JsonObject): Refusal | null {
  for (const [name, value] of Object.entries(body)) {
    const property = properties[name];
    if (!property) continue;
    if (!property.readable) return { code: '1102', message: `${resource}.${name} is not readable, so it cannot be reported` };
    const problem = valueProblem(name, property, value, 'r');
    if (problem) return { code: '1102', message: problem };
  }
  return null;
}

/** A device whose profile lists error codes reports one of them as its error, or null once it has none. */
function errorProblem(errors: string[], body: JsonObject): Refusal | null {
  if (errors.length === 0 || !Object.hasOwn(body, ERROR_KEY)) return null;
  const code = body[ERROR_KEY];
  if (code === null || (typeof code === 'string' && errors.includes(code))) return null;
  return { code: '1102', message: `${ERROR_KEY} must be one of the profile's error codes (${errors.join(', ')}), or null once the error is gone; got ${show(code)}` };
}

function reportSet(set: ResourceSet, errors: string[], body: JsonObject): ValidationResult<JsonObject> {
  const error = errorProblem(errors, body);
  if (error) return { ok: false, refusal: error };
  const out: JsonObject = { ...body };
  for (const [resource, value] of Object.entries(body)) {
    const entries = set.arrays[resource];
    const properties = set.resources[resource];
    if (entries) {
      const oneUnit = showsOneUnit(resource, entries[0]?.key);
      if (oneUnit && !isObject(value)) {
        return refuse('1102', `${resource} must be one object in the unit the appliance shows (one of ${entries.map((e) => e.name).join(', ')}); got ${show(value)}`);
      }
      const list: unknown[] = Array.isArray(value) ? value : [value];
      const normalised: JsonObject[] = [];
      for (const item of list) {
        if (!isObject(item)) return refuse('1102', `${resource} entries must be objects; got ${show(item)}`);
        const entry = pickEntry(resource, entries, item, '1102');
        if (!entry.ok) return entry;
        const refusal = reportProperties(resource, entry.value.properties, item);
        if (refusal) return { ok: false, refusal };
        normalised.push({ ...item, [entry.value.key]: entry.value.name });
      }
      out[resource] = oneUnit ? normalised[0] : normalised;
    } else if (properties) {
      if (!isObject(value)) return refuse('1102', `${resource} must be an object of properties; got ${show(value)}`);
      const refusal = reportProperties(resource, properties, value);
      if (refusal) return { ok: false, refusal };
    }
  }
  return { ok: true, value: out };
}

/**
 * A device's (partial) status: every declared property it names must be readable with a value the
 * profile's `value.r` allows, and an `error` one of the profile's error codes (or null, cleared).
 * Whole-profile-array devices may send one location entry or an array.
 */
export function validateReport(profile: ParsedProfile, report: unknown): ValidationResult<DeviceStatus> {
  if (!profile.locations) {
    if (!isObject(report)) return refuse('1000', `A status report must be a JSON object; got ${Array.isArray(report) ? 'an array' : show(report)}`);
    return reportSet(profile.root as ResourceSet, profile.errors, report);
  }
  const entries: unknown[] = Array.isArray(report) ? report : [report];
  const out: JsonObject[] = [];
  for (const entry of entries) {
    if (!isObject(entry)) return refuse('1000', `A status report must be a location entry object or an array of them; got ${show(entry)}`);
    const { location: address, ...resources } = entry;
    const location = pickLocation(profile, address, '1102');
    if (!location.ok) return location;
    const checked = reportSet(location.value.set, profile.errors, resources);
    if (!checked.ok) return checked;
    out.push({ location: { locationName: location.value.name }, ...checked.value });
  }
  return { ok: true, value: out };
}
