import { describe, expect, it } from 'vitest';
import { countriesOf, isCountryCode, regionOf } from '../src/regions.js';

describe('country codes (DESIGN A.2: x-country-code is ISO 3166-1 alpha-2)', () => {
  it('are the 249 codes ISO 3166-1 assigns', () => {
    const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
    const codes = [...letters].flatMap((a) => [...letters].map((b) => a + b)).filter(isCountryCode);
    // XK (Kosovo) is no ISO code, but the preset serves it.
    expect(codes.filter((code) => code !== 'XK')).toHaveLength(249);
    expect(codes).toEqual(expect.arrayContaining(['GB', 'KR', 'US', 'DE', 'SS', 'XK']));
  });

  it('count every country the preset serves', () => {
    for (const region of ['KIC', 'EIC', 'AIC'] as const) {
      for (const country of countriesOf(region)) {
        expect(isCountryCode(country)).toBe(true);
        expect(regionOf(country)).toBe(region);
      }
    }
  });

  it.each(['UK', 'EU', 'UN', 'AC', 'IC', 'SU', 'YU', 'CS', 'XA', 'XB', 'QO', 'ZZ', 'gb', 'G'])('leave out %s', (code) => {
    expect(isCountryCode(code)).toBe(false);
  });
});
