/**
 * Names from outside at every level of a command or a report (DESIGN J): a resource, a property, an
 * enum value, a location, an entry's locationName or unit. A position builds the body that puts a
 * name there, legal everywhere else, and says what any unknown name earns there.
 */
import fc from 'fast-check';
import { commandFor, legalValues, listReadable, listWritable, parsedProfile, validateCommand, validateReport, type ListedProperty } from '../../src/catalog/index.js';
import type { CatalogModel, JsonObject } from '../../src/catalog/types.js';

/** The names every JS object has: constructor, toString, hasOwnProperty, __proto__, __defineGetter__, … */
export const INHERITED_NAMES: readonly string[] = Object.getOwnPropertyNames(Object.prototype);

/** An unknown name no profile has, whose outcome an inherited name must match. */
export const ORDINARY_NAME = 'notInTheProfile';

export type Level = 'resource' | 'property' | 'enum value' | 'location' | 'entry';
export type Side = 'command' | 'report';

export interface Position {
  model: CatalogModel;
  side: Side;
  level: Level;
  /** What an unknown name earns here: a refusal code, or `kept` (a report's undeclared property). */
  expected: '2207' | '1102' | 'kept';
  /** A command or report with `name` at this position. */
  body(name: string): JsonObject;
}

const EXPECTED: Record<Side, Record<Level, Position['expected']>> = {
  command: { resource: '2207', property: '2207', 'enum value': '1102', location: '1102', entry: '1102' },
  report: { resource: 'kept', property: 'kept', 'enum value': '1102', location: '1102', entry: '1102' },
};

/** The item a level puts the name into, and how. */
const LEVELS: { level: Level; fits(item: ListedProperty): boolean; place(item: ListedProperty, name: string, legal: unknown): JsonObject }[] = [
  { level: 'resource', fits: () => true, place: (item, name, legal) => commandFor({ ...item, resource: name }, legal) },
  { level: 'property', fits: () => true, place: (item, name) => commandFor({ ...item, name }, 1) },
  { level: 'enum value', fits: (item) => item.property.type === 'enum', place: (item, name) => commandFor(item, name) },
  {
    level: 'location',
    fits: (item) => item.address.location !== undefined,
    place: (item, name, legal) => commandFor({ ...item, address: { ...item.address, location: name } }, legal),
  },
  {
    level: 'entry',
    fits: (item) => item.address.entry !== undefined,
    place: (item, name, legal) => {
      const entry = item.address.entry as { key: 'locationName' | 'unit' };
      return commandFor({ ...item, address: { ...item.address, entry: { key: entry.key, name } } }, legal);
    },
  },
];

/** Every level a model has, on both sides: a command of its writable properties, a report of its readable ones. */
export function positionsOf(model: CatalogModel): Position[] {
  const profile = parsedProfile(model);
  const positions: Position[] = [];
  for (const side of ['command', 'report'] as const) {
    const items = side === 'command' ? listWritable(profile) : listReadable(profile);
    for (const { level, fits, place } of LEVELS) {
      const item = items.find(fits);
      if (!item) continue;
      const legal = legalValues(item.property, side === 'command' ? 'w' : 'r')[0];
      positions.push({ model, side, level, expected: EXPECTED[side][level], body: (name) => place(item, name, legal) });
    }
  }
  return positions;
}

/** Whether a name could be declared anywhere in the model's profile, or address an entry; such a name is not unknown. */
export function isUnknownTo(model: CatalogModel, name: string): boolean {
  return !['location', 'locationName', 'unit'].includes(name) && !JSON.stringify(model.profile).includes(JSON.stringify(name));
}

/** Inherited names, and identifier-like names of any kind. */
export const outsideName: fc.Arbitrary<string> = fc.oneof(fc.constantFrom(...INHERITED_NAMES), fc.stringMatching(/^[A-Za-z_$][\w$]{0,15}$/));

/** Whether `name` is an own key of an object somewhere in a JSON value. */
export function holdsKey(value: unknown, name: string): boolean {
  if (Array.isArray(value)) return value.some((v) => holdsKey(v, name));
  if (typeof value !== 'object' || value === null) return false;
  return Object.hasOwn(value, name) || Object.values(value).some((v) => holdsKey(v, name));
}

/** The refusal an ordinary unknown name earns at a position, with `name` in its place. */
export function unknownNameRefusal(position: Position, name: string): { code: string; message: string } {
  const validate = position.side === 'command' ? validateCommand : validateReport;
  const ordinary = validate(parsedProfile(position.model), position.body(ORDINARY_NAME));
  if (ordinary.ok) throw new Error(`${position.model.modelName} ${position.side} ${position.level}: an unknown name was accepted`);
  return { code: ordinary.refusal.code, message: ordinary.refusal.message.replaceAll(ORDINARY_NAME, () => name) };
}
