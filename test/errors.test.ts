import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../src/errors.js';

const reference = JSON.parse(readFileSync(new URL('../reference/thinq/_api/error_codes.json', import.meta.url), 'utf8')) as {
  codes: { code: string; sdkName: string; http?: number }[];
};
const byCode = new Map(reference.codes.map((row) => [row.code, row]));

describe('the error table', () => {
  it('holds exactly the codes of DESIGN A.4', () => {
    expect(Object.keys(ERRORS).sort()).toEqual([
      '1000', '1101', '1102', '1103', '1104', '1202', '1204', '1205', '1206', '1207', '1210', '1216', '1221', '1222', '1224',
      '1301', '1305', '1306', '1307', '1308', '1312', '2000', '2201', '2207', '2208', '2209', '2301', '2302', '2303', '2304', '2305',
    ]);
  });

  it.each(Object.entries(ERRORS))('%s is a code of the reference table with its SDK name', (code, row) => {
    expect(byCode.get(code)?.sdkName).toBe(row.name);
  });

  it.each(Object.entries(ERRORS).filter(([code]) => byCode.get(code)?.http !== undefined))(
    '%s answers with the HTTP status LG gives',
    (code, row) => {
      expect(row.http).toBe(byCode.get(code)?.http);
    },
  );

  it('gives the statuses DESIGN decided where LG gives none', () => {
    expect([ERRORS['1103'].http, ERRORS['1301'].http, ERRORS['1305'].http, ERRORS['1306'].http, ERRORS['1312'].http]).toEqual([401, 401, 404, 429, 400]);
    expect([ERRORS['2201'].http]).toEqual([400]);
  });
});
