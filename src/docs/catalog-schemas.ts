/**
 * JSON Schemas of each appliance type's profile, status and control command, generated from the
 * catalog's parsed profiles (DESIGN A.6) for the published contract only: the routes keep validating
 * with the catalog itself, and statuses may hold properties a profile does not declare (DESIGN J), so
 * status schemas allow more; commands may hold only what the profile makes writable.
 */
import { DEVICE_TYPES, listModels, parsedProfile } from '../catalog/index.js';
import type { ParsedProfile, Property, Resource, ResourceEntry, ResourceSet } from '../catalog/types.js';
import { zeroMeansNoTimer } from '../catalog/values.js';

export type JsonSchema = Record<string, unknown>;
type Side = 'status' | 'control';

/** `DEVICE_ALIAS_CHANGED` → `DeviceAliasChanged`: constants of the interface as component names. */
export function pascalCase(constant: string): string {
  return constant.toLowerCase().split('_').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
}

/** `DEVICE_WASHTOWER_WASHER` → `WashtowerWasher`: the stem of the type's component names. */
export function typeStem(deviceType: string): string {
  return pascalCase(deviceType.replace(/^DEVICE_/, ''));
}

/** A reference to a named component of the document. */
export const componentRef = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

/** The schema with a description naming the unit and anything else the schema cannot say. */
function withUnit(schema: JsonSchema, property: Property, notes: string[] = []): JsonSchema {
  const unit = 'unit' in property && property.unit !== undefined ? [`unit: ${property.unit}`] : [];
  const description = [...unit, ...notes].join('; ');
  return description ? { ...schema, description } : schema;
}

/** The value property `name` holds in a status (read side) or may be set to in a command (write side). */
function valueSchema(name: string, property: Property, side: Side): JsonSchema | null {
  const usable = side === 'status' ? property.readable : property.writable;
  if (!usable) return null;
  switch (property.type) {
    case 'fixed':
      return { const: property.value };
    case 'enum': {
      const values = side === 'status' ? property.read : property.write;
      return withUnit({ type: 'string', enum: values }, property);
    }
    case 'list': {
      const values = side === 'status' ? property.read : property.write;
      return withUnit({ type: 'array', items: { type: 'string', enum: values } }, property);
    }
    case 'range': {
      const range = side === 'status' ? property.read : property.write;
      const bounds = range ? { minimum: range.min, maximum: range.max } : {};
      const steps = range && range.step !== 1 ? [`in steps of ${range.step} from ${range.min}`] : [];
      const schema = withUnit({ type: 'number', ...bounds }, property, steps);
      // A status shows 0 below the range when no relative timer is set, as the catalog takes it in reports.
      return side === 'status' && range && range.min > 0 && zeroMeansNoTimer(name) ? { anyOf: [{ const: 0, description: 'no timer set' }, schema] } : schema;
    }
    case 'boolean':
    case 'number':
    case 'string':
      return withUnit({ type: property.type }, property);
  }
}

/** An object of the properties usable on one side; null when none is. Statuses allow undeclared properties. */
function propertiesSchema(resource: Resource, side: Side, extra: Record<string, JsonSchema> = {}): JsonSchema | null {
  const properties: Record<string, JsonSchema> = {};
  for (const [name, property] of Object.entries(resource)) {
    const schema = valueSchema(name, property, side);
    if (schema) properties[name] = schema;
  }
  if (Object.keys(properties).length === 0) return null;
  return { type: 'object', properties: { ...extra, ...properties }, additionalProperties: side === 'status' };
}

/** One entry of a multi-location resource, with its addressing key. */
function entrySchema(entry: ResourceEntry, side: Side): JsonSchema | null {
  return propertiesSchema(entry.properties, side, { [entry.key]: { const: entry.name } });
}

/** A multi-location resource: a status holds entries (or the one the appliance shows), a command addresses one. */
function entriesSchema(entries: ResourceEntry[], side: Side): JsonSchema | null {
  const schemas = entries.map((entry) => entrySchema(entry, side)).filter((s): s is JsonSchema => s !== null);
  if (schemas.length === 0) return null;
  const entry = schemas.length === 1 ? schemas[0]! : { anyOf: schemas };
  return side === 'status' ? { anyOf: [{ type: 'array', items: entry }, entry] } : entry;
}

function setSchema(set: ResourceSet, side: Side, extra: Record<string, JsonSchema> = {}): JsonSchema | null {
  const properties: Record<string, JsonSchema> = {};
  for (const [name, resource] of Object.entries(set.resources)) {
    const schema = propertiesSchema(resource, side);
    if (schema) properties[name] = schema;
  }
  for (const [name, entries] of Object.entries(set.arrays)) {
    const schema = entriesSchema(entries, side);
    if (schema) properties[name] = schema;
  }
  if (Object.keys(properties).length === 0) return null;
  return { type: 'object', properties: { ...extra, ...properties }, additionalProperties: side === 'status' };
}

/** A whole profile on one side: an object, or for whole-profile location arrays one entry per location. */
function profileSide(profile: ParsedProfile, side: Side): JsonSchema | null {
  if (profile.root) return setSchema(profile.root, side);
  const locations = (profile.locations ?? [])
    .map(({ name, set }) => setSchema(set, side, { location: { type: 'object', properties: { locationName: { const: name } }, required: ['locationName'] } }))
    .filter((s): s is JsonSchema => s !== null);
  if (locations.length === 0) return null;
  const location = locations.length === 1 ? locations[0]! : { anyOf: locations };
  return side === 'status' ? { type: 'array', items: location } : location;
}

/** The schemas of a type's models, as one (the same shape twice is one). */
function union(schemas: (JsonSchema | null)[]): JsonSchema | null {
  const distinct = [...new Map(schemas.filter((s): s is JsonSchema => s !== null).map((s) => [JSON.stringify(s), s])).values()];
  if (distinct.length === 0) return null;
  return distinct.length === 1 ? distinct[0]! : { anyOf: distinct };
}

/** A type's profile: the ThinQ grammar, with the notification codes and errors its models declare. */
function profileSchema(profiles: ParsedProfile[], examples: unknown[]): JsonSchema {
  const pushCodes = [...new Set(profiles.flatMap((p) => p.pushCodes))];
  const errors = [...new Set(profiles.flatMap((p) => p.errors))];
  const codes = (values: string[]): JsonSchema => ({ type: 'array', items: values.length ? { type: 'string', enum: values } : { type: 'string' } });
  return {
    type: 'object',
    required: ['property'],
    properties: {
      property: {
        description: 'Resources of property descriptors; an array of locations keyed by location.locationName for washers and ovens.',
        anyOf: [{ type: 'object', additionalProperties: true }, { type: 'array', items: { type: 'object', additionalProperties: true } }],
      },
      notification: { type: 'object', properties: { push: codes(pushCodes) }, additionalProperties: true },
      error: codes(errors),
      extensionProperty: { type: 'object', additionalProperties: true },
    },
    additionalProperties: true,
    examples,
  };
}

export interface TypeSchemas {
  /** Named components: `WasherProfile`, `WasherStatus`, `WasherControl`, … */
  components: Record<string, JsonSchema>;
  /** Any type's profile, status or control command: a union of references to the per-type components. */
  profile: JsonSchema;
  status: JsonSchema;
  control: JsonSchema;
}

/** The per-type schemas of every catalog type, and their unions. */
export function typeSchemas(): TypeSchemas {
  const components: Record<string, JsonSchema> = {};
  const names = { profile: [] as string[], status: [] as string[], control: [] as string[] };
  for (const deviceType of DEVICE_TYPES) {
    const stem = typeStem(deviceType);
    const models = listModels(deviceType);
    const parsed = models.map(parsedProfile);
    const described = (schema: JsonSchema, what: string): JsonSchema => ({ title: `${stem}${what}`, description: `${what} of a ${deviceType}.`, ...schema });
    components[`${stem}Profile`] = described(profileSchema(parsed, models.map((m) => m.profile)), 'Profile');
    names.profile.push(`${stem}Profile`);
    const status = union(parsed.map((p) => profileSide(p, 'status')));
    components[`${stem}Status`] = described({ ...(status ?? { type: 'object' }), examples: [models[0]!.defaultStatus] }, 'Status');
    names.status.push(`${stem}Status`);
    // A type with no writable property (the water purifier) takes no command: every one is refused with 2207.
    const control = union(parsed.map((p) => profileSide(p, 'control')));
    if (control) {
      components[`${stem}Control`] = described(control, 'Control');
      names.control.push(`${stem}Control`);
    }
  }
  const anyOf = (list: string[], description: string): JsonSchema => ({ description, anyOf: list.map(componentRef) });
  return {
    components,
    profile: anyOf(names.profile, 'The device profile in the ThinQ grammar, by device type.'),
    status: anyOf(names.status, "The device's full status in status shape, by device type (an array per location for washers and ovens)."),
    control: anyOf(names.control, 'A partial status holding only writable properties plus the addressing keys of the entry it targets (locationName, location.locationName, unit).'),
  };
}
