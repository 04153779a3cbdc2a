/**
 * Value checks of one property against its descriptor (DESIGN A.6), shared by command and report
 * validation. Pure; a problem is an English sentence naming the property and what it allows.
 */
import type { JsonObject, Property, RangeValue } from './types.js';

/** Which side of a descriptor a value is checked against: what a partner may write, or what a device may report. */
export type Access = 'r' | 'w';

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * An empty map for names that come from outside (DESIGN J): it has no prototype, so looking up
 * `constructor`, `toString` or `__proto__` finds nothing, and setting `__proto__` sets a key.
 */
export function nameMap<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** What `record` holds under `name` itself, never what every object inherits (`constructor`, `toString`, …). */
export function own<T>(record: Readonly<Record<string, T>>, name: string): T | undefined {
  return Object.hasOwn(record, name) ? record[name] : undefined;
}

/**
 * A deep copy of a JSON value (a status, a report, a device's memory): several times faster than
 * structuredClone on objects this small, and a control copies a few. A `__proto__` key stays a key.
 */
export function cloneJson<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item: unknown) => cloneJson(item)) as T;
  if (typeof value !== 'object' || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const child = cloneJson((value as Record<string, unknown>)[key]);
    if (key === '__proto__') Object.defineProperty(copy, key, { value: child, enumerable: true, writable: true, configurable: true });
    else copy[key] = child;
  }
  return copy as T;
}

/** Structural equality of JSON values. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

/**
 * JSON text of a value for messages; `undefined` is spelled out rather than vanishing, and so is a
 * number past JSON's (1e400 parses to Infinity, which JSON text would show as null).
 */
export function show(value: unknown): string {
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  return value === undefined ? 'nothing' : JSON.stringify(value);
}

/** Tolerance for steps such as 0.5 that binary floating point cannot hold exactly. */
const EPSILON = 1e-9;

/** Whether a number is within a range, on a step from its minimum, and not excepted. */
export function inRange(range: RangeValue, value: number): boolean {
  if (value < range.min - EPSILON || value > range.max + EPSILON) return false;
  const steps = (value - range.min) / range.step;
  if (Math.abs(steps - Math.round(steps)) > EPSILON) return false;
  return !range.except.some((x) => Math.abs(x - value) <= EPSILON);
}

function describeRange(range: RangeValue): string {
  const except = range.except.length ? `, except ${range.except.join(', ')}` : '';
  return `between ${range.min} and ${range.max} in steps of ${range.step}${except}`;
}

const RELATIVE_TIMER = /^relative(Hour|Minute)To(Start|Stop)$/;

/** Real devices report a relative timer of 0 for "no timer set", below ranges that start at 1 or 3. */
export function zeroMeansNoTimer(name: string): boolean {
  return RELATIVE_TIMER.test(name);
}

/**
 * Why `value` is not permitted for `property` on the given side, or null when it is.
 * `name` is the bare property name, as LG's messages use it.
 */
export function valueProblem(name: string, property: Property, value: unknown, access: Access): string | null {
  switch (property.type) {
    case 'enum': {
      const values = access === 'w' ? property.write : property.read;
      return typeof value === 'string' && values.includes(value) ? null : `${name} must be one of ${values.join(', ')}; got ${show(value)}`;
    }
    case 'range': {
      const range = access === 'w' ? property.write : property.read;
      // The parser sets the side of every accessible range; a missing one means the side is not accessible.
      if (!range) return `${name} is not ${access === 'w' ? 'writable' : 'readable'}`;
      if (access === 'r' && value === 0 && zeroMeansNoTimer(name)) return null;
      return typeof value === 'number' && Number.isFinite(value) && inRange(range, value) ? null : `${name} must be ${describeRange(range)}; got ${show(value)}`;
    }
    case 'boolean':
      return typeof value === 'boolean' ? null : `${name} must be true or false; got ${show(value)}`;
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? null : `${name} must be a finite number; got ${show(value)}`;
    case 'string':
      return typeof value === 'string' ? null : `${name} must be a string; got ${show(value)}`;
    case 'list': {
      const values = access === 'w' ? property.write : property.read;
      const ok = Array.isArray(value) && value.every((x) => typeof x === 'string' && values.includes(x));
      return ok ? null : `${name} must be a list of values among ${values.join(', ')}; got ${show(value)}`;
    }
    case 'fixed':
      return deepEqual(value, property.value) ? null : `${name} is fixed at ${show(property.value)}; got ${show(value)}`;
  }
}
