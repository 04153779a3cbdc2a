/**
 * A resource whose profile keys entries by unit but whose status shows one of them, in the unit the
 * appliance displays: LG's oven status `"temperature": {"targetTemperature": 350, "unit": "F"}`.
 */
import { describe, expect, it } from 'vitest';
import { diffStatus, getModel, mergeStatus, parsedProfile, validateCommand, validateReport } from '../../src/catalog/index.js';
import { buildDefaultStatus } from '../../src/catalog/defaults.js';
import { showsOneUnit } from '../../src/catalog/status.js';
import type { JsonObject } from '../../src/catalog/types.js';

const oven = parsedProfile(getModel('DEVICE_OVEN', 'OVEN_910604_WW')!);
const airConditioner = parsedProfile(getModel('DEVICE_AIR_CONDITIONER', 'RAC_910604_WW')!);
const OVEN = { location: { locationName: 'OVEN' } };
const at = (temperature: unknown) => [{ ...OVEN, temperature }];
const status = (temperature: unknown) => [{ ...OVEN, runState: { currentState: 'INITIAL' }, temperature }];

describe('showsOneUnit', () => {
  it('holds for unit-keyed resources except those named for carrying every unit', () => {
    expect(showsOneUnit('temperature', 'unit')).toBe(true);
    expect(showsOneUnit('temperatureInUnits', 'unit')).toBe(false);
    expect(showsOneUnit('twoSetTemperatureInUnits', 'unit')).toBe(false);
    expect(showsOneUnit('temperature', 'locationName')).toBe(false);
  });
});

describe('validateReport of a one-unit resource', () => {
  it("takes one object naming its unit, checked against that unit's range, and keeps it an object", () => {
    expect(validateReport(oven, { ...OVEN, temperature: { targetTemperature: 350, unit: 'F' } })).toEqual({ ok: true, value: at({ targetTemperature: 350, unit: 'F' }) });
    expect(validateReport(oven, { ...OVEN, temperature: { targetTemperature: 180, unit: 'C' } })).toEqual({ ok: true, value: at({ targetTemperature: 180, unit: 'C' }) });
    expect(validateReport(oven, { ...OVEN, temperature: { targetTemperature: 350, unit: 'C' } })).toEqual({
      ok: false,
      refusal: { code: '1102', message: 'targetTemperature must be between 0 and 285 in steps of 5; got 350' },
    });
  });

  it("takes a cavity at rest showing a target of 0, as LG's documented oven status does, though 0 cannot be set", () => {
    expect(validateReport(oven, { ...OVEN, temperature: { targetTemperature: 0, unit: 'F' } })).toEqual({ ok: true, value: at({ targetTemperature: 0, unit: 'F' }) });
    expect(validateCommand(oven, { ...OVEN, temperature: { targetTemperature: 0, unit: 'F' } })).toMatchObject({ ok: false, refusal: { code: '1102' } });
  });

  it('refuses every unit at once, or a value without its unit', () => {
    const both = [{ targetTemperature: 350, unit: 'F' }, { targetTemperature: 175, unit: 'C' }];
    expect(validateReport(oven, { ...OVEN, temperature: both })).toEqual({
      ok: false,
      refusal: { code: '1102', message: `temperature must be one object in the unit the appliance shows (one of F, C); got ${JSON.stringify(both)}` },
    });
    expect(validateReport(oven, { ...OVEN, temperature: { targetTemperature: 350 } })).toEqual({
      ok: false,
      refusal: { code: '1102', message: 'temperature.unit is required: one of F, C' },
    });
  });

  it('leaves resources that carry every unit as arrays', () => {
    const report = { temperatureInUnits: { unit: 'C', currentTemperature: 22 } };
    expect(validateReport(airConditioner, report)).toEqual({ ok: true, value: { temperatureInUnits: [{ unit: 'C', currentTemperature: 22 }] } });
  });
});

describe('mergeStatus and diffStatus of a one-unit resource', () => {
  const fahrenheit = status({ targetTemperature: 350, unit: 'F' });

  it('updates the unit shown, and reports the change with its unit', () => {
    const merged = mergeStatus(oven, fahrenheit, at({ targetTemperature: 375, unit: 'F' }));
    expect(merged).toEqual(status({ targetTemperature: 375, unit: 'F' }));
    expect(diffStatus(oven, fahrenheit, merged)).toEqual(at({ targetTemperature: 375, unit: 'F' }));
  });

  it('switches to the unit a report is in, and reports the whole object', () => {
    const merged = mergeStatus(oven, fahrenheit, at({ targetTemperature: 180, unit: 'C' }));
    expect(merged).toEqual(status({ targetTemperature: 180, unit: 'C' }));
    expect(diffStatus(oven, fahrenheit, merged)).toEqual(at({ targetTemperature: 180, unit: 'C' }));
  });

  it('reports nothing when the same value comes again', () => {
    expect(diffStatus(oven, fahrenheit, mergeStatus(oven, fahrenheit, at({ targetTemperature: 350, unit: 'F' })))).toBeNull();
  });

  it('turns a status stored with every unit into the one reported', () => {
    const stored = status([{ unit: 'F', targetTemperature: 350 }, { unit: 'C', targetTemperature: 175 }]);
    const merged = mergeStatus(oven, stored, at({ targetTemperature: 180, unit: 'C' }));
    expect(merged).toEqual(status({ targetTemperature: 180, unit: 'C' }));
    expect(diffStatus(oven, stored, merged)).toEqual(at({ targetTemperature: 180, unit: 'C' }));
    expect(diffStatus(oven, stored, mergeStatus(oven, stored, [{ ...OVEN, runState: { currentState: 'PREHEATING' } }]))).toEqual([
      { ...OVEN, runState: { currentState: 'PREHEATING' } },
    ]);
  });
});

describe('buildDefaultStatus of a one-unit resource', () => {
  const temperatureOf = (reference: unknown, sandbox = {}) => (buildDefaultStatus(oven, reference, sandbox) as JsonObject[])[0]?.temperature;

  it("shows the unit of the reference status, else the profile's first", () => {
    expect(temperatureOf(at({ targetTemperature: 180, unit: 'C' }))).toEqual({ unit: 'C', targetTemperature: 180 });
    // At rest: the lowest it reads, 0, as LG's documented status shows.
    expect(temperatureOf({})).toEqual({ unit: 'F', targetTemperature: 0 });
    expect(temperatureOf({}, { 'temperature[F].targetTemperature': 350 })).toEqual({ unit: 'F', targetTemperature: 350 });
  });
});
