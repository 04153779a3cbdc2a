/**
 * Every document of reference/thinq/ against the grammar: profiles parse, statuses validate as
 * reports of their profile, LG's command examples are accepted by LG's example profile. Where the
 * reference contradicts itself, the exact refusal is recorded below with the reason, so the table
 * fails as soon as a defect is fixed or a new one appears.
 */
import { describe, expect, it } from 'vitest';
import { parseProfile, validateCommand, validateReport } from '../../src/catalog/index.js';
import type { JsonObject } from '../../src/catalog/types.js';
import type { Refusal } from '../../src/errors.js';
import { devicesOf, FOLDERS, hasFile, profileOf, readJson } from './fixtures.js';

interface Defect {
  refusal: Refusal;
  reason: string;
}

/** Status documents refused by their own profile, keyed `folder/file` (`#half` for the washtower). */
const STATUS_DEFECTS: Readonly<Record<string, Defect>> = {
  'air_conditioner/lgdoc_status.json': {
    refusal: { code: '1102', message: 'targetTemperature must be between 18 and 30 in steps of 1; got 14' },
    reason: "LG's example reports 14 °C against its profile's 18..30 (it also reports the write-only airCleanOperationMode as \"ON\")",
  },
  'kimchi_refrigerator/status.json': {
    refusal: { code: '1102', message: 'targetTemperature must be one of TEMPERATURE_NUMBER; got 6' },
    reason: 'the real capture declares the placeholder enum TEMPERATURE_NUMBER and reports the number itself',
  },
  'oven/lgdoc_status.json': {
    refusal: { code: '1102', message: 'location.locationName must be one of UPPER; got "LOWER"' },
    reason: "LG's example status has a LOWER oven its single-location (UPPER) example profile lacks",
  },
  'refrigerator/status.json': {
    refusal: { code: '1102', message: 'targetTemperature must be between 0 and 7 in steps of 1; got 8' },
    reason: "copy of LG's example: FRIDGE temperature.targetTemperature 8 above its profile's max 7",
  },
  'refrigerator/lgdoc_status.json': {
    refusal: { code: '1102', message: 'targetTemperature must be between 0 and 7 in steps of 1; got 8' },
    reason: "FRIDGE temperature.targetTemperature 8 above its profile's max 7",
  },
};

/** LG command examples refused by the same folder's LG example profile. */
const COMMAND_DEFECTS: Readonly<Record<string, Defect>> = {
  air_conditioner: {
    refusal: { code: '2207', message: 'Property "timer.absoluteHourToStart" is not in the profile of this device' },
    reason: "LG's example sets an absolute start timer its example profile lacks (the real capture has it)",
  },
  dehumidifier: {
    refusal: { code: '2207', message: 'Resource "humidifierJobMode" is not in the profile of this device' },
    reason: "LG copied the humidifier's example (humidifierJobMode HUMIDIFY) into the dehumidifier docs",
  },
  dish_washer: {
    refusal: { code: '2207', message: 'This device cannot be controlled: its profile has no writable property' },
    reason: "LG's example profile omits the operation its schema and both SDKs document (the catalog's model adds it)",
  },
  oven: {
    refusal: { code: '1102', message: 'location.locationName must be one of UPPER; got "LOWER"' },
    reason: "LG's example starts a LOWER oven; its example profile has only UPPER, which only accepts STOP",
  },
  refrigerator: {
    refusal: { code: '2207', message: 'Resource "powerSave" is not in the profile of this device' },
    reason: "LG's example sets powerSave, which its example profile does not have (and its schema makes read-only)",
  },
};

const profileFiles = ['profile.json', 'lgdoc_profile.json'] as const;
const statusFiles = [
  ['status.json', 'profile.json'],
  ['lgdoc_status.json', 'lgdoc_profile.json'],
] as const;

describe.each(FOLDERS)('reference/thinq/%s', (folder) => {
  it.each(profileFiles)('%s parses', (file) => {
    for (const { document } of devicesOf(folder, file)) expect(() => parseProfile(document as JsonObject)).not.toThrow();
  });

  it.each(statusFiles)('%s validates as a report against %s', (statusFile, profileFile) => {
    for (const { name, document } of devicesOf(folder, statusFile)) {
      const key = `${folder}/${statusFile}${name.includes('#') ? `#${name.split('#')[1]}` : ''}`;
      const result = validateReport(parseProfile(profileOf(folder, name, profileFile)), document);
      const defect = STATUS_DEFECTS[key];
      if (defect) expect(result, `known defect: ${defect.reason}`).toEqual({ ok: false, refusal: defect.refusal });
      else expect(result, key).toMatchObject({ ok: true });
    }
  });

  it.runIf(hasFile(folder, 'lgdoc_command.json'))('lgdoc_command.json is accepted by lgdoc_profile.json', () => {
    for (const { name, document } of devicesOf(folder, 'lgdoc_command.json')) {
      const result = validateCommand(parseProfile(profileOf(folder, name, 'lgdoc_profile.json')), document);
      const defect = COMMAND_DEFECTS[folder];
      if (defect) expect(result, `known defect: ${defect.reason}`).toEqual({ ok: false, refusal: defect.refusal });
      else expect(result).toMatchObject({ ok: true });
    }
  });
});

describe('the known-defect tables', () => {
  it('name only documents that exist', () => {
    for (const key of Object.keys(STATUS_DEFECTS)) {
      const [folder = '', file = ''] = key.split('#')[0]?.split('/') ?? [];
      expect(hasFile(folder, file), key).toBe(true);
    }
    for (const folder of Object.keys(COMMAND_DEFECTS)) expect(hasFile(folder, 'lgdoc_command.json'), folder).toBe(true);
  });

  it("leaves the real air-conditioner capture accepting LG's absolute-timer example", () => {
    const profile = parseProfile(readJson('air_conditioner', 'profile.json') as JsonObject);
    expect(validateCommand(profile, readJson('air_conditioner', 'lgdoc_command.json'))).toMatchObject({ ok: true });
  });
});
