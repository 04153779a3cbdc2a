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

/**
 * The 249 codes ISO 3166-1 assigns to countries, as the standard lists them. Not ICU's region names:
 * those also hold reserved codes (UK, EU, AC), withdrawn ones (SU, YU) and private ones (XA), which
 * would pass as countries and then be refused as another region's (1307) instead of unknown (1216).
 */
const ASSIGNED = new Set(
  `AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ
   BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ
   CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ
   DE DJ DK DM DO DZ
   EC EE EG EH ER ES ET
   FI FJ FK FM FO FR
   GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY
   HK HM HN HR HT HU
   ID IE IL IM IN IO IQ IR IS IT
   JE JM JO JP
   KE KG KH KI KM KN KP KR KW KY KZ
   LA LB LC LI LK LR LS LT LU LV LY
   MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ
   NA NC NE NF NG NI NL NO NP NR NU NZ
   OM
   PA PE PF PG PH PK PL PM PN PR PS PT PW PY
   QA
   RE RO RS RU RW
   SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ
   TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ
   UA UG UM US UY UZ
   VA VC VE VG VI VN VU
   WF WS
   YE YT
   ZA ZM ZW`.split(/\s+/),
);

/**
 * Whether `code` is a country code: ISO 3166-1 alpha-2 as assigned, or one the preset serves (it
 * serves Kosovo as XK, a code users assign).
 */
export function isCountryCode(code: string): boolean {
  return ASSIGNED.has(code) || REGION_OF.has(code);
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
