/**
 * The catalog: appliance types and their models as data (DESIGN A.6), built at load time from the
 * reference captures and LG examples in reference/thinq/ and the model descriptions in models/.
 */
import { readFileSync } from 'node:fs';
import { buildDefaultStatus } from './defaults.js';
import { type ModelSource, TYPE_MODELS } from './models/index.js';
import { parseProfile } from './profile.js';
import type { CatalogModel, JsonObject, ParsedProfile } from './types.js';
import { isObject } from './values.js';

export { parseProfile } from './profile.js';
export { validateCommand, validateReport, mergeStatus, diffStatus } from './validate.js';
export { checkConditions } from './conditions.js';
export { hasWritableProperty, listProperties, listReadable, listWritable, legalValues, commandFor, valueAt } from './properties.js';
export type { ListedProperty, PropertyAddress } from './properties.js';

/** Resolves the same from src/catalog/ and dist/catalog/: both sit two levels below the package root. */
const REFERENCE = new URL('../../reference/thinq/', import.meta.url);

/** A reference JSON file, by its path under reference/thinq/. */
function readReference(file: string): unknown {
  return JSON.parse(readFileSync(new URL(file, REFERENCE), 'utf8'));
}

/** `add` deep-merged into `base`: objects merge key by key, anything else is replaced. */
function withAdditions(base: JsonObject, add: JsonObject): JsonObject {
  const out: JsonObject = { ...base };
  for (const [key, value] of Object.entries(add)) {
    const current = out[key];
    out[key] = isObject(current) && isObject(value) ? withAdditions(current, value) : value;
  }
  return out;
}

function loadProfile(source: ModelSource['profile']): JsonObject {
  if (typeof source !== 'string' && 'own' in source) return source.own;
  const base = readReference(typeof source === 'string' ? source : source.base);
  const loaded = typeof source !== 'string' && isObject(base) ? withAdditions(base, source.add) : base;
  if (!isObject(loaded)) throw new Error(`Catalog profile ${JSON.stringify(source)} is not a JSON object`);
  return loaded;
}

const parsed = new WeakMap<CatalogModel, ParsedProfile>();

function buildModel(deviceType: string, source: ModelSource): CatalogModel {
  const profile = loadProfile(source.profile);
  const parsedProfile = parseProfile(profile);
  const reference = source.status === undefined ? {} : readReference(source.status);
  const model: CatalogModel = {
    deviceType,
    modelName: source.modelName,
    profile,
    defaultStatus: buildDefaultStatus(parsedProfile, reference, source.sandbox),
  };
  parsed.set(model, parsedProfile);
  return model;
}

const MODELS: readonly CatalogModel[] = TYPE_MODELS.flatMap((t) => t.models.map((m) => buildModel(t.deviceType, m)));

/** The fourteen device types of the catalog, in sandbox order. */
export const DEVICE_TYPES: readonly string[] = TYPE_MODELS.map((t) => t.deviceType);

/** A model of a type by name, or the type's default model when no name is given. */
export function getModel(deviceType: string, modelName?: string): CatalogModel | undefined {
  const models = MODELS.filter((m) => m.deviceType === deviceType);
  return modelName === undefined ? models[0] : models.find((m) => m.modelName === modelName);
}

/** Every model, or those of one type; each type's default model comes first. */
export function listModels(deviceType?: string): CatalogModel[] {
  return MODELS.filter((m) => deviceType === undefined || m.deviceType === deviceType);
}

/** A model's parsed profile, parsed once. */
export function parsedProfile(model: CatalogModel): ParsedProfile {
  const known = parsed.get(model);
  if (known) return known;
  const fresh = parseProfile(model.profile);
  parsed.set(model, fresh);
  return fresh;
}
