/**
 * The profile grammar of DESIGN A.6 (the ThinQ one) as types. A profile is served to partners
 * exactly as stored; these types are what the catalog parses it into to validate and simulate.
 */
import type { Refusal } from '../errors.js';

/** A device status, a report or a control command: JSON in status shape. */
export type DeviceStatus = Record<string, unknown> | Record<string, unknown>[];
export type JsonObject = Record<string, unknown>;

export type RangeValue = { min: number; max: number; step: number; except: number[] };

/** One property descriptor of a profile, normalised (plain literals become fixed read-only values). */
export type Property =
  | { type: 'enum'; readable: boolean; writable: boolean; read: string[]; write: string[]; unit?: string }
  | { type: 'range'; readable: boolean; writable: boolean; read: RangeValue | null; write: RangeValue | null; unit?: string }
  | { type: 'boolean'; readable: boolean; writable: boolean; unit?: string }
  | { type: 'number'; readable: boolean; writable: boolean; unit?: string }
  | { type: 'string'; readable: boolean; writable: boolean; unit?: string }
  | { type: 'list'; readable: boolean; writable: boolean; read: string[]; write: string[]; unit?: string }
  | { type: 'fixed'; readable: true; writable: false; value: unknown };

/** Keys that address an entry of a multi-location resource or profile. */
export type AddressKey = 'locationName' | 'unit';

/** A resource: properties by name. */
export type Resource = Record<string, Property>;

/** An entry of a multi-location resource, addressed by `locationName` or `unit`. */
export interface ResourceEntry {
  key: AddressKey;
  name: string;
  properties: Resource;
}

/** The resources of one location (or the whole device when it has one). */
export interface ResourceSet {
  /** Plain resources. */
  resources: Record<string, Resource>;
  /** Resources that are arrays of addressed entries (refrigerator temperatureInUnits, AC temperatureInUnits by unit). */
  arrays: Record<string, ResourceEntry[]>;
}

/** A parsed profile. `locations` is set when the whole profile is an array keyed by location.locationName. */
export interface ParsedProfile {
  locations: { name: string; set: ResourceSet }[] | null;
  root: ResourceSet | null;
  pushCodes: string[];
  errors: string[];
}

/** One model of the catalog: its profile as served, and its status at registration. */
export interface CatalogModel {
  deviceType: string;
  modelName: string;
  profile: JsonObject;
  defaultStatus: DeviceStatus;
}

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; refusal: Refusal };
