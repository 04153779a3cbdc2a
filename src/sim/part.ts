/**
 * One location of a device's status (or the whole status of a device without locations), seen
 * through its profile: the engine reads and writes behaviour paths here, and a write the profile
 * does not allow is skipped. This is where behaviour rows are filtered by the device's own profile.
 */
import { ERROR_KEY, showsOneUnit } from '../catalog/status.js';
import type { AddressKey, JsonObject, Property, ResourceSet } from '../catalog/types.js';
import { deepEqual, isObject, valueProblem } from '../catalog/values.js';
import type { Condition, Expect, PathText, Value } from './behaviour.js';

/** What a device's simulation remembers between minutes that its status does not show. */
export interface Memory {
  /** Minutes each hold's condition has held, by row key; absent while it does not hold. */
  held: Record<string, number>;
  /** Rows that notified in the current episode (a door still open does not notify again). */
  notified: Record<string, true>;
  /** Wear counters, in minutes of use or finished programmes. */
  wear: Record<string, number>;
  /** Precise values behind rounded status numbers (drifting measurements, timers counting down). */
  exact: Record<string, number>;
  /** `$name` values: write-only settings and sandbox modes. */
  flags: Record<string, unknown>;
}

export function emptyMemory(): Memory {
  return { held: {}, notified: {}, wear: {}, exact: {}, flags: {} };
}

type ParsedPath = { resource: string; entry?: string; name: string } | { flag: string };

const PATH = /^(\w+)(?:\[([\w-]+)\])?\.(\w+)$/;
const FLAG = /^\$(\w+)$/;
const parsedPaths = new Map<PathText, ParsedPath>();

/** Parses a behaviour path once; a malformed one is a bug in a table, so it throws. */
function parsePath(text: PathText): ParsedPath {
  const known = parsedPaths.get(text);
  if (known) return known;
  const flag = FLAG.exec(text);
  const match = PATH.exec(text);
  let parsed: ParsedPath;
  if (flag) parsed = { flag: flag[1] as string };
  else if (match) parsed = { resource: match[1] as string, name: match[3] as string, ...(match[2] ? { entry: match[2] } : {}) };
  else throw new Error(`Behaviour path ${JSON.stringify(text)} is not resource.property, resource[entry].property or $name`);
  parsedPaths.set(text, parsed);
  return parsed;
}

/** Rounds to a granularity without binary noise: 24.5, not 24.499999999. */
export function roundTo(value: number, step: number): number {
  return Number((Math.round(value / step) * step).toFixed(6));
}

function meets(value: unknown, expect: Expect): boolean {
  if (value === undefined) return false;
  if (typeof expect !== 'object') return value === expect;
  if ('not' in expect) return value !== expect.not;
  if ('atMost' in expect) return typeof value === 'number' && value <= expect.atMost;
  if ('atLeast' in expect) return typeof value === 'number' && value >= expect.atLeast;
  return expect.includes(value as string);
}

export class Part {
  constructor(
    readonly set: ResourceSet,
    /** The location's status, mutated in place by writes: a draft the caller diffs afterwards. */
    readonly values: JsonObject,
    readonly memory: Memory,
    readonly location?: string,
  ) {}

  /** A memory key for a row or path of this location. */
  key(id: string): string {
    return this.location === undefined ? id : `${this.location}/${id}`;
  }

  property(path: PathText): Property | undefined {
    const parsed = parsePath(path);
    if ('flag' in parsed) return undefined;
    const { resource, entry, name } = parsed;
    if (entry === undefined) return this.set.resources[resource]?.[name];
    return this.set.arrays[resource]?.find((e) => e.name === entry)?.properties[name];
  }

  /** Whether the profile lets the status show this path (memory paths always exist). */
  has(path: PathText): boolean {
    return 'flag' in parsePath(path) || this.property(path)?.readable === true;
  }

  /** Whether the profile lets the status show this value at this path. */
  canShow(path: PathText, value: unknown): boolean {
    const parsed = parsePath(path);
    if ('flag' in parsed) return true;
    const property = this.property(path);
    return property?.readable === true && valueProblem(parsed.name, property, value, 'r') === null;
  }

  read(path: PathText): unknown {
    const parsed = parsePath(path);
    if ('flag' in parsed) return this.memory.flags[this.key(parsed.flag)];
    const body = this.values[parsed.resource];
    if (parsed.entry === undefined) return isObject(body) ? body[parsed.name] : undefined;
    const key = this.set.arrays[parsed.resource]?.[0]?.key;
    const entries: unknown[] = Array.isArray(body) ? body : [body];
    const found = entries.find((e) => isObject(e) && key !== undefined && e[key] === parsed.entry);
    return isObject(found) ? found[parsed.name] : undefined;
  }

  /** Shows the error code the device has now (LG's `error`), or none. */
  showError(code: string | undefined): void {
    if (code === undefined) delete this.values[ERROR_KEY];
    else this.values[ERROR_KEY] = code;
  }

  readNumber(path: PathText): number {
    const value = this.read(path);
    return typeof value === 'number' ? value : 0;
  }

  /** Writes a value the profile allows the status to show; anything else is skipped and answers false. */
  write(path: PathText, value: unknown): boolean {
    const parsed = parsePath(path);
    if ('flag' in parsed) {
      this.memory.flags[this.key(parsed.flag)] = value;
      return true;
    }
    if (!this.canShow(path, value)) return false;
    if (deepEqual(this.read(path), value)) return true;
    const { resource, entry, name } = parsed;
    if (entry === undefined) {
      const body = this.values[resource];
      this.values[resource] = { ...(isObject(body) ? body : {}), [name]: value };
      return true;
    }
    const key = (this.set.arrays[resource]?.[0]?.key) as AddressKey;
    const body = this.values[resource];
    if (showsOneUnit(resource, key)) {
      // A value in another unit switches the unit the appliance shows.
      const shown = isObject(body) && body[key] === entry ? body : { [key]: entry };
      this.values[resource] = { ...shown, [name]: value };
      return true;
    }
    const entries = (Array.isArray(body) ? body : [body]).filter(isObject).map((e) => ({ ...e }));
    const found = entries.find((e) => e[key] === entry);
    if (found) found[name] = value;
    else entries.push({ [key]: entry, [name]: value });
    this.values[resource] = entries;
    return true;
  }

  /** Writes every value of `writes` that the profile allows. */
  writeAll(writes: Readonly<Record<PathText, Value>>): void {
    for (const [path, value] of Object.entries(writes)) {
      this.write(path, typeof value === 'object' ? this.readNumber(path) + value.add : value);
    }
  }

  matches(condition: Condition | undefined): boolean {
    return condition === undefined || Object.entries(condition).every(([path, expect]) => meets(this.read(path), expect));
  }

  /** Why a condition does not hold, naming the path and its value; null when it holds. */
  mismatch(condition: Condition | undefined): string | null {
    for (const [path, expect] of Object.entries(condition ?? {})) {
      const value = this.read(path);
      if (meets(value, expect)) continue;
      return value === undefined ? `this device has no ${path}` : `${path} is ${JSON.stringify(value)}`;
    }
    return null;
  }
}
