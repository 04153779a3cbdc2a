/**
 * Per-type profile, status and control types written from the server's catalog (DESIGN A.6): every
 * model of a type is walked property by property and the types are the union of what they declare,
 * so a command the compiler accepts names only writable properties with values some model allows.
 */
import { DEVICE_TYPES, listModels, listProperties, parsedProfile } from '../../../src/catalog/index.js';
import { showsOneUnit } from '../../../src/catalog/status.js';
import type { AddressKey, Property } from '../../../src/catalog/types.js';

/** One resource of a type, merged over its models and locations. */
interface ResourceShape {
  /** Set for a resource of addressed entries (refrigerator `temperatureInUnits` by locationName, AC by unit). */
  entry?: { key: AddressKey; names: Set<string>; several: boolean };
  properties: Map<string, Property[]>;
}

interface TypeShape {
  /** Set when the whole status is an array of locations (washer, oven). */
  locations: { names: Set<string>; several: boolean } | null;
  resources: Map<string, ResourceShape>;
  pushCodes: Set<string>;
  /** The profile's `error` codes: the status shows one as `error` while the device has it. */
  errorCodes: Set<string>;
}

/** `DEVICE_AIR_CONDITIONER` → `AirConditioner`. */
export function typeName(deviceType: string): string {
  return deviceType
    .replace(/^DEVICE_/, '')
    .toLowerCase()
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
}

function shapeOf(deviceType: string): TypeShape {
  const shape: TypeShape = { locations: null, resources: new Map(), pushCodes: new Set(), errorCodes: new Set() };
  for (const model of listModels(deviceType)) {
    const profile = parsedProfile(model);
    profile.pushCodes.forEach((code) => shape.pushCodes.add(code));
    profile.errors.forEach((code) => shape.errorCodes.add(code));
    if (profile.locations) {
      shape.locations ??= { names: new Set(), several: false };
      profile.locations.forEach((l) => shape.locations!.names.add(l.name));
      shape.locations.several ||= profile.locations.length > 1;
    }
    for (const { resource, name, property, address } of listProperties(profile)) {
      const known: ResourceShape = shape.resources.get(resource) ?? { properties: new Map() };
      shape.resources.set(resource, known);
      if (address.entry) {
        const entries = profile.root?.arrays[resource] ?? profile.locations?.find((l) => l.name === address.location)?.set.arrays[resource] ?? [];
        known.entry ??= { key: address.entry.key, names: new Set(), several: false };
        known.entry.names.add(address.entry.name);
        known.entry.several ||= entries.length > 1;
      }
      known.properties.set(name, [...(known.properties.get(name) ?? []), property]);
    }
  }
  return shape;
}

const literals = (values: Iterable<string>): string => {
  const list = [...new Set(values)];
  return list.length === 0 ? 'never' : list.map((v) => JSON.stringify(v)).join(' | ');
};

/** The TypeScript type of a property's value, read (`r`) or written (`w`), over every model's descriptor. */
function valueType(properties: Property[], side: 'r' | 'w'): string {
  const enums = new Set<string>();
  const members = new Set<string>();
  const others = new Set<string>();
  for (const property of properties) {
    if (property.type === 'enum') (side === 'r' ? property.read : property.write).forEach((v) => enums.add(v));
    else if (property.type === 'list') (side === 'r' ? property.read : property.write).forEach((v) => members.add(v));
    else if (property.type === 'range' || property.type === 'number') others.add('number');
    else if (property.type === 'fixed') others.add(JSON.stringify(property.value));
    else others.add(property.type);
  }
  const types = [...(enums.size ? [literals(enums)] : []), ...(members.size ? [`Array<${literals(members)}>`] : []), ...others];
  return types.length ? types.join(' | ') : 'never';
}

function objectType(fields: string[], indent: string): string {
  return fields.length === 0 ? 'Record<string, never>' : `{\n${fields.map((f) => `${indent}  ${f};`).join('\n')}\n${indent}}`;
}

const key = (name: string): string => (/^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name));

/** The resources of a status (every readable property) or of a control command (writable ones only). */
function resourceFields(shape: TypeShape, side: 'r' | 'w', indent: string): string[] {
  const fields: string[] = [];
  for (const [resource, { entry, properties }] of shape.resources) {
    const props = [...properties].filter(([, list]) => list.some((p) => (side === 'r' ? p.readable : p.writable)));
    if (props.length === 0) continue;
    const inner = props
      .filter(([name]) => name !== entry?.key)
      .map(([name, list]) => `${key(name)}?: ${valueType(list.filter((p) => (side === 'r' ? p.readable : p.writable)), side)}`);
    if (!entry) {
      fields.push(`${key(resource)}?: ${objectType(inner, `${indent}  `)}`);
      continue;
    }
    // Status entries always carry their address; a command may leave it out only when there is one entry.
    const address = `${entry.key}${side === 'w' && !entry.several ? '?' : ''}: ${literals(entry.names)}`;
    const entryType = objectType([address, ...inner], `${indent}  `);
    const oneUnit = side === 'w' || showsOneUnit(resource, entry.key);
    fields.push(`${key(resource)}?: ${oneUnit ? entryType : `Array<${entryType}>`}`);
  }
  return fields;
}

function statusType(shape: TypeShape): string {
  // null only in the DEVICE_STATUS report that clears it: a status has an error or none.
  const error = shape.errorCodes.size ? [`error?: ${literals(shape.errorCodes)} | null`] : [];
  if (!shape.locations) return objectType([...resourceFields(shape, 'r', ''), ...error], '');
  const location = `location: { locationName: ${literals(shape.locations.names)} }`;
  return `Array<${objectType([location, ...resourceFields(shape, 'r', ''), ...error], '')}>`;
}

function controlType(shape: TypeShape): string {
  const fields = resourceFields(shape, 'w', '');
  if (fields.length === 0) return 'never';
  if (!shape.locations) return objectType(fields, '');
  const location = `location${shape.locations.several ? '' : '?'}: { locationName: ${literals(shape.locations.names)} }`;
  return objectType([location, ...fields], '');
}

/** The profile's resources and property names, each property a descriptor (or a fixed literal). */
function profileType(shape: TypeShape, name: string): string {
  const resources = [...shape.resources].map(([resource, { entry, properties }]) => {
    const props = [...properties.keys()].filter((p) => p !== entry?.key).map((p) => `${key(p)}?: PropertyDescriptor | string | number | boolean`);
    const body = objectType(entry ? [`${entry.key}: ${literals(entry.names)}`, ...props] : props, '    ');
    return `${key(resource)}?: ${entry ? `Array<${body}>` : body}`;
  });
  const resourceSet = objectType(resources, '  ');
  const property = shape.locations ? `Array<{ location: { locationName: ${literals(shape.locations.names)} } } & ${resourceSet}>` : resourceSet;
  return objectType([
    `property: ${property}`,
    `notification?: { push: ${name}PushCode[] }`,
    'error?: string[]',
    'extensionProperty?: Record<string, unknown>',
  ], '');
}

/** The whole generated module's text. */
export function deviceTypesSource(): string {
  const out = [
    '/**',
    ' * Per-type profile, status and control types of the catalog (DESIGN A.6), generated by',
    ' * `npm run -w @appliance-cloud/client generate` from src/catalog. Do not edit.',
    ' */',
    "import type { PropertyDescriptor } from '../profile.js';",
    '',
  ];
  const map: string[] = [];
  for (const deviceType of DEVICE_TYPES) {
    const name = typeName(deviceType);
    const shape = shapeOf(deviceType);
    out.push(
      `/** Push codes a ${deviceType} may raise (DEVICE_PUSH). */`,
      `export type ${name}PushCode = ${literals(shape.pushCodes)};`,
      `/** The profile of a ${deviceType}, over every catalog model of the type. */`,
      `export type ${name}Profile = ${profileType(shape, name)};`,
      `/** The status of a ${deviceType}: what GET /devices/{id} and a control answer carry. */`,
      `export type ${name}Status = ${statusType(shape)};`,
      `/** A control command for a ${deviceType}: writable properties plus the addressing keys of the entry it targets.${controlType(shape) === 'never' ? ' The type has no writable property.' : ''} */`,
      `export type ${name}Control = ${controlType(shape)};`,
      '',
    );
    map.push(`  ${deviceType}: { profile: ${name}Profile; status: ${name}Status; control: ${name}Control; pushCode: ${name}PushCode };`);
  }
  out.push('/** Every device type of the catalog with its profile, status, control and push-code types. */', 'export interface DeviceTypes {', ...map, '}', '');
  return out.join('\n');
}
