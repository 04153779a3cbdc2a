/** Country → region membership: the ThinQ SDKs' country preset (reference/thinq/_api/regions.json). */
import { readFileSync } from 'node:fs';
import type { Region } from './config.js';

const PRESET = JSON.parse(
  readFileSync(new URL('../reference/thinq/_api/regions.json', import.meta.url), 'utf8'),
) as Record<Region | '_note', string[]>;

const REGION_OF = new Map<string, Region>();
for (const region of ['KIC', 'EIC', 'AIC'] as const) {
  for (const country of PRESET[region]) REGION_OF.set(country, region);
}

// ICU knows every ISO 3166-1 alpha-2 code, plus a few groupings that are not countries.
const NOT_COUNTRIES = new Set(['EU', 'EZ', 'UN', 'QO', 'ZZ']);
const names = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });

/** Whether `code` is an ISO 3166-1 alpha-2 country code (upper case). */
export function isCountryCode(code: string): boolean {
  if (!/^[A-Z]{2}$/.test(code)) return false;
  if (REGION_OF.has(code)) return true;
  return !NOT_COUNTRIES.has(code) && names.of(code) !== undefined;
}

/** The region serving `country`, if any. */
export function regionOf(country: string): Region | undefined {
  return REGION_OF.get(country);
}

/** The countries `region` serves, in the preset's order. */
export function countriesOf(region: Region): readonly string[] {
  return PRESET[region];
}

/** A country of `region`, for demo users: the first of the preset. */
export function demoCountry(region: Region): string {
  return region === 'KIC' ? 'KR' : region === 'EIC' ? 'DE' : 'US';
}
