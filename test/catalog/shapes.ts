/**
 * The shape of a status as a partner's client reads it: which resources are objects and which are
 * arrays, which properties they carry, and the kind of each value. Compared between what we serve
 * and LG's documented and captured statuses, for what the served profile declares.
 */
import { commandFor, legalValues, mergeStatus, valueAt } from '../../src/catalog/index.js';
import type { DeviceStatus, JsonObject, ParsedProfile, Resource, ResourceSet } from '../../src/catalog/types.js';
import { deepEqual, isObject } from '../../src/catalog/values.js';
import { DOCUMENTS_OF_TYPE, documentOf, shownReadable } from './fixtures.js';

/** A JSON value's kind: object, array, string, number, boolean or null. */
export function kindOf(value: unknown): string {
  return Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value;
}

const entriesOf = (value: unknown): JsonObject[] => (Array.isArray(value) ? value : [value]).filter(isObject);

/** What is compared: a full status must carry what the reference carries; a report only what changed. */
export type Served = 'status' | 'report';

function compareProperties(path: string, properties: Resource, served: JsonObject, reference: JsonObject, what: Served): string[] {
  const out: string[] = [];
  for (const [name, property] of Object.entries(properties)) {
    if (!property.readable || !(name in reference)) continue;
    if (!(name in served)) {
      if (what === 'status') out.push(`${path}.${name}: missing, the reference has it`);
      continue;
    }
    const [ours, theirs] = [kindOf(served[name]), kindOf(reference[name])];
    if (ours !== theirs) out.push(`${path}.${name}: served ${ours}, reference ${theirs}`);
  }
  return out;
}

function compareSet(prefix: string, set: ResourceSet, served: JsonObject, reference: JsonObject, what: Served): string[] {
  const out: string[] = [];
  const both = (resource: string) => resource in served && resource in reference;
  for (const [resource, properties] of Object.entries(set.resources)) {
    if (!both(resource)) continue;
    const [ours, theirs] = [kindOf(served[resource]), kindOf(reference[resource])];
    if (ours !== theirs) out.push(`${prefix}${resource}: served ${ours}, reference ${theirs}`);
    else if (ours === 'object') out.push(...compareProperties(`${prefix}${resource}`, properties, served[resource] as JsonObject, reference[resource] as JsonObject, what));
  }
  for (const [resource, entries] of Object.entries(set.arrays)) {
    if (!both(resource)) continue;
    const [ours, theirs] = [kindOf(served[resource]), kindOf(reference[resource])];
    if (ours !== theirs) out.push(`${prefix}${resource}: served ${ours}, reference ${theirs}`);
    const key = entries[0]?.key ?? 'unit';
    for (const theirEntry of entriesOf(reference[resource])) {
      const entry = entries.find((e) => e.name === theirEntry[key]);
      // One entry shown as an object (an oven's temperature) may be in another unit than the reference's: its properties share their names.
      const shown = served[resource];
      const ourEntry = isObject(shown) ? shown : entriesOf(shown).find((e) => e[key] === theirEntry[key]);
      if (!entry || !ourEntry) continue;
      out.push(...compareProperties(`${prefix}${resource}[${entry.name}]`, entry.properties, ourEntry, theirEntry, what));
    }
  }
  return out;
}

/**
 * Where `served` (a status or a DEVICE_STATUS report we produced) differs in shape from `reference`
 * (an LG status document), for every resource and property `profile` declares; [] when it does not.
 * Location entries pair by `location.locationName`, else with our first location: a location's
 * resources have the same shape whatever its name.
 */
export function shapeDifferences(profile: ParsedProfile, served: unknown, reference: unknown, what: Served): string[] {
  const [ours, theirs] = [kindOf(served), kindOf(reference)];
  const top = ours === theirs ? [] : [`status: served ${ours}, reference ${theirs}`];
  if (!profile.locations) {
    return isObject(served) && isObject(reference) ? [...top, ...compareSet('', profile.root as ResourceSet, served, reference, what)] : top;
  }
  const servedEntries = entriesOf(served);
  const nameOf = (entry: JsonObject) => (isObject(entry.location) ? entry.location.locationName : undefined);
  const locations = entriesOf(reference).flatMap((theirs) => {
    const ours = servedEntries.find((e) => nameOf(e) === nameOf(theirs)) ?? servedEntries[0];
    const location = profile.locations?.find((l) => l.name === nameOf(ours ?? {})) ?? profile.locations?.[0];
    if (!ours || !location) return [];
    return compareSet(`${location.name}/`, location.set, ours, theirs, what);
  });
  return [...top, ...locations];
}

/**
 * A report that changes every readable property `status` shows and the profile lets change (a fixed
 * value cannot), in status shape: the DEVICE_STATUS it causes then carries every such property.
 */
export function changingEverything(profile: ParsedProfile, status: DeviceStatus): DeviceStatus {
  let report: DeviceStatus = profile.locations ? [] : {};
  for (const item of shownReadable(profile, status)) {
    const current = valueAt(status, item);
    const other = legalValues(item.property, 'r').find((value) => !deepEqual(value, current));
    if (other !== undefined) report = mergeStatus(profile, report, commandFor(item, other));
  }
  return report;
}

/** A one-location washer's status: LG's capture is the location's object, LG's documentation an array of locations. */
const ONE_LOCATION = ['status: served array, reference object'];

/** Differences between what we serve and an LG status document, by `deviceType document/file`; docs/statuses.md explains each. */
export const DISAGREEMENTS: Readonly<Record<string, readonly string[]>> = {
  'DEVICE_WASHER washer/status.json': ONE_LOCATION,
  // DEVICE_WASHTOWER's washer half is the location's object, without `location`, in both of LG's documents.
  'DEVICE_WASHTOWER_WASHER washtower#washer/status.json': ONE_LOCATION,
  'DEVICE_WASHTOWER_WASHER washtower#washer/lgdoc_status.json': ONE_LOCATION,
};

/** LG's status documents of a catalog type, each keyed as DISAGREEMENTS is. */
export function comparisons(deviceType: string): { key: string; document: unknown }[] {
  return (DOCUMENTS_OF_TYPE[deviceType] ?? []).flatMap((name) =>
    ['lgdoc_status.json', 'status.json'].flatMap((file) => {
      const document = documentOf(name, file);
      return document === undefined ? [] : [{ key: `${deviceType} ${name}/${file}`, document }];
    }),
  );
}
