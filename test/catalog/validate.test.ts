/** DESIGN A.6 on concrete profiles: addressing, exact messages, reports, and status arithmetic. */
import { describe, expect, it } from 'vitest';
import { diffStatus, mergeStatus, parseProfile, validateCommand, validateReport } from '../../src/catalog/index.js';
import type { JsonObject } from '../../src/catalog/types.js';
import { readJson } from './fixtures.js';

const profileOf = (folder: string, file = 'profile.json') => parseProfile(readJson(folder, file) as JsonObject);
const refrigerator = profileOf('refrigerator');
const airConditioner = profileOf('air_conditioner');
const washer = profileOf('washer');
const oven = profileOf('oven');
const enumOf = (values: string[]) => ({ mode: ['w'], type: 'enum', value: { w: values } });
const twoOvens = parseProfile({
  property: [
    { location: { locationName: 'UPPER' }, operation: { ovenOperationMode: enumOf(['START', 'STOP']) } },
    { location: { locationName: 'LOWER' }, operation: { ovenOperationMode: enumOf(['START', 'STOP']) } },
  ],
});

const refused = (code: string, message: string) => ({ ok: false, refusal: { code, message } });
const dryer = profileOf('dryer');
const lgWasher = profileOf('washer', 'lgdoc_profile.json');

describe('validateCommand', () => {
  it('addresses a location entry by locationName, as an object or a one-element array', () => {
    const expected = { ok: true, value: { temperatureInUnits: { locationName: 'FRIDGE', targetTemperatureC: 3 } } };
    expect(validateCommand(refrigerator, { temperatureInUnits: { locationName: 'FRIDGE', targetTemperatureC: 3 } })).toEqual(expected);
    expect(validateCommand(refrigerator, { temperatureInUnits: [{ locationName: 'FRIDGE', targetTemperatureC: 3 }] })).toEqual(expected);
  });

  it("accepts the SDK's repeated read-only unit beside locationName when it is a unit the entry reads, and drops it", () => {
    const sdk = { temperatureInUnits: { locationName: 'FRIDGE', unit: 'C', targetTemperatureC: 3 } };
    expect(validateCommand(refrigerator, sdk)).toEqual({ ok: true, value: { temperatureInUnits: { locationName: 'FRIDGE', targetTemperatureC: 3 } } });
    const lgDoc = { temperature: { targetTemperature: 0, locationName: 'FRIDGE', unit: 'C' } };
    expect(validateCommand(refrigerator, lgDoc)).toMatchObject({ ok: true });
    expect(validateCommand(refrigerator, { ...sdk, temperatureInUnits: { ...sdk.temperatureInUnits, unit: 'K' } })).toEqual(refused('1102', 'unit must be one of C, F; got "K"'));
  });

  it('names the range, the step and the exceptions when a value is out of range', () => {
    expect(validateCommand(refrigerator, { temperatureInUnits: { locationName: 'FRIDGE', targetTemperatureC: 12 } })).toEqual(
      refused('1102', 'targetTemperatureC must be between 1 and 8 in steps of 1; got 12'),
    );
    expect(validateCommand(refrigerator, { temperatureInUnits: { locationName: 'FREEZER', targetTemperatureF: -5 } })).toEqual(
      refused('1102', 'targetTemperatureF must be between -6 and 8 in steps of 1, except -5, 7; got -5'),
    );
    expect(validateCommand(airConditioner, { temperatureInUnits: { unit: 'F', coolTargetTemperature: 65 } })).toEqual(
      refused('1102', 'coolTargetTemperature must be between 64 and 86 in steps of 2; got 65'),
    );
  });

  it('requires the entry address when a resource has several entries, and refuses an unknown one', () => {
    expect(validateCommand(refrigerator, { temperatureInUnits: { targetTemperatureC: 3 } })).toEqual(
      refused('1101', 'temperatureInUnits.locationName is required: one of FRIDGE, FREEZER'),
    );
    expect(validateCommand(refrigerator, { temperatureInUnits: { locationName: 'PANTRY', targetTemperatureC: 3 } })).toEqual(
      refused('1102', 'temperatureInUnits.locationName must be one of FRIDGE, FREEZER; got "PANTRY"'),
    );
  });

  it('addresses unit-keyed entries by unit', () => {
    expect(validateCommand(airConditioner, { temperatureInUnits: { coolTargetTemperature: 24, unit: 'C' } })).toEqual({
      ok: true,
      value: { temperatureInUnits: { unit: 'C', coolTargetTemperature: 24 } },
    });
    expect(validateCommand(airConditioner, { temperatureInUnits: { unit: 'C', targetTemperature: 24 } })).toEqual(
      refused('2201', 'temperatureInUnits.targetTemperature is read-only'),
    );
  });

  it('addresses whole-profile locations by location.locationName, which a one-location device may omit', () => {
    const start = { operation: { washerOperationMode: 'START' } };
    const normalised = { ok: true, value: { location: { locationName: 'MAIN' }, ...start } };
    expect(validateCommand(washer, { location: { locationName: 'MAIN' }, ...start })).toEqual(normalised);
    expect(validateCommand(washer, start)).toEqual(normalised);
    expect(validateCommand(washer, { location: { locationName: 'MINI' }, ...start })).toEqual(refused('1102', 'location.locationName must be one of MAIN; got "MINI"'));
    expect(validateCommand(twoOvens, { operation: { ovenOperationMode: 'START' } })).toEqual(
      refused('1101', 'location.locationName is required: this device has locations UPPER, LOWER'),
    );
    expect(validateCommand(twoOvens, { location: { locationName: 'LOWER' }, operation: { ovenOperationMode: 'START' } })).toMatchObject({ ok: true });
  });

  it('refuses a name other than locationName in location with 2207, __proto__ and a typo alike (DESIGN J)', () => {
    const start = { operation: { washerOperationMode: 'START' } };
    expect(validateCommand(washer, { location: { locationNmae: 'MAIN' }, ...start })).toEqual(refused('2207', 'Property "location.locationNmae" is not in the profile of this device'));
    const proto = JSON.parse('{"location":{"locationName":"MAIN","__proto__":1},"operation":{"washerOperationMode":"START"}}');
    expect(validateCommand(washer, proto)).toEqual(refused('2207', 'Property "location.__proto__" is not in the profile of this device'));
    expect(validateCommand(washer, { location: {}, ...start })).toEqual({ ok: true, value: { location: { locationName: 'MAIN' }, ...start } });
  });

  it('names the property and the allowed values', () => {
    expect(validateCommand(washer, { operation: { washerOperationMode: 'RUN' } })).toEqual(
      refused('1102', 'washerOperationMode must be one of START, STOP, POWER_OFF, POWER_ON; got "RUN"'),
    );
    expect(validateCommand(refrigerator, { refrigeration: { expressMode: 'yes' } })).toEqual(refused('1102', 'expressMode must be true or false; got "yes"'));
    expect(validateCommand(washer, { runState: { currentState: 'RUNNING' } })).toEqual(refused('2201', 'runState.currentState is read-only'));
    expect(validateCommand(washer, { foo: { bar: 1 } })).toEqual(refused('2207', 'Resource "foo" is not in the profile of this device'));
    expect(validateCommand(washer, { operation: 'START' })).toEqual(refused('1102', 'operation must be an object of properties; got "START"'));
  });

  it('refuses a command of addressing keys only as empty', () => {
    const empty = refused('1101', 'The control command is empty: it names no property to control');
    expect(validateCommand(washer, { location: { locationName: 'MAIN' } })).toEqual(empty);
    expect(validateCommand(refrigerator, { temperatureInUnits: { locationName: 'FRIDGE' } })).toEqual(empty);
    expect(validateCommand(washer, { operation: {} })).toEqual(empty);
  });
});

describe('validateReport', () => {
  it('accepts a relative timer of 0, which devices report for "no timer set", but never as a command', () => {
    const report = { location: { locationName: 'MAIN' }, timer: { relativeHourToStart: 0 } };
    expect(validateReport(washer, report).ok).toBe(true);
    expect(validateCommand(washer, report)).toEqual(refused('1102', 'relativeHourToStart must be between 1 and 19 in steps of 1; got 0'));
  });

  it('keeps keys the profile does not declare, as real devices send them', () => {
    const status = readJson('air_conditioner', 'status.json') as JsonObject;
    expect(validateReport(airConditioner, status)).toEqual({ ok: true, value: status });
  });

  it('refuses a declared property with a value its value.r does not allow, or one that is not readable', () => {
    expect(validateReport(airConditioner, { airFlow: { windStrength: 'GALE' } })).toEqual(refused('1102', 'windStrength must be one of LOW, HIGH, MID; got "GALE"'));
    expect(validateReport(airConditioner, { operation: { airCleanOperationMode: 'START' } })).toEqual(
      refused('1102', 'operation.airCleanOperationMode is not readable, so it cannot be reported'),
    );
    expect(validateReport(airConditioner, [])).toMatchObject({ ok: false, refusal: { code: '1000' } });
  });

  it('takes a location entry as an object or an array, and returns an array of entries carrying their location', () => {
    const running = { runState: { currentState: 'RUNNING' } };
    const expected = { ok: true, value: [{ location: { locationName: 'MAIN' }, ...running }] };
    expect(validateReport(washer, { location: { locationName: 'MAIN' }, ...running })).toEqual(expected);
    expect(validateReport(washer, [{ location: { locationName: 'MAIN' }, ...running }])).toEqual(expected);
    expect(validateReport(washer, running)).toEqual(expected);
    expect(validateReport(oven, { ...running })).toEqual(refused('1102', 'location.locationName is required: this device has locations UPPER, LOWER'));
    expect(validateReport(oven, [3])).toMatchObject({ ok: false, refusal: { code: '1000' } });
  });

  it("takes an `error` among the profile's error codes, or null once it is gone; anything else is refused", () => {
    expect(dryer.errors).toContain('DOOR_OPEN_ERROR');
    expect(validateReport(dryer, { error: 'DOOR_OPEN_ERROR' })).toEqual({ ok: true, value: { error: 'DOOR_OPEN_ERROR' } });
    expect(validateReport(dryer, { error: null })).toEqual({ ok: true, value: { error: null } });
    for (const wrong of ['DOOR_AJAR', 3, ['DOOR_OPEN_ERROR']]) {
      expect(validateReport(dryer, { error: wrong })).toEqual(refused('1102', `error must be one of the profile's error codes (${dryer.errors.join(', ')}), or null once the error is gone; got ${JSON.stringify(wrong)}`));
    }
    // In the location entry of a device with locations; a profile without an error list keeps it as any extra.
    expect(validateReport(lgWasher, { location: { locationName: 'MAIN' }, error: 'NOT_LISTED' })).toMatchObject({ ok: false, refusal: { code: '1102' } });
    expect(validateReport(airConditioner, { error: 'ANYTHING' })).toEqual({ ok: true, value: { error: 'ANYTHING' } });
  });

  it('normalises a reported entry of a multi-location resource to an array', () => {
    expect(validateReport(refrigerator, { temperatureInUnits: { locationName: 'FRIDGE', targetTemperatureC: 4 } })).toEqual({
      ok: true,
      value: { temperatureInUnits: [{ locationName: 'FRIDGE', targetTemperatureC: 4 }] },
    });
  });
});

describe('mergeStatus and diffStatus', () => {
  const fridge = readJson('refrigerator', 'status.json') as JsonObject;

  it('merge addressed entries by their key and diff to the changed part with the key kept', () => {
    const report = { temperatureInUnits: [{ locationName: 'FRIDGE', targetTemperatureC: 3 }] };
    const merged = mergeStatus(refrigerator, fridge, report) as JsonObject;
    expect(merged.temperatureInUnits).toEqual([
      { targetTemperatureC: 3, targetTemperatureF: 46, unit: 'C', locationName: 'FRIDGE' },
      { targetTemperatureC: -16, targetTemperatureF: 8, unit: 'C', locationName: 'FREEZER' },
    ]);
    expect(diffStatus(refrigerator, fridge, merged)).toEqual(report);
    expect(fridge.temperatureInUnits).toEqual((readJson('refrigerator', 'status.json') as JsonObject).temperatureInUnits);
  });

  it('merge location entries by location.locationName and diff per location', () => {
    const status = readJson('oven', 'status.json') as JsonObject[];
    const report = [{ location: { locationName: 'LOWER' }, runState: { currentState: 'DONE' } }];
    const merged = mergeStatus(oven, status, report) as JsonObject[];
    expect(merged[0]).toEqual(status[0]);
    expect(merged[1]).toEqual({ ...status[1], runState: { currentState: 'DONE' } });
    expect(diffStatus(oven, status, merged)).toEqual(report);
  });

  it('an `error` reported null leaves the status, and the change that removes it says null', () => {
    const failing = mergeStatus(dryer, { runState: { currentState: 'RUNNING' } }, { runState: { currentState: 'ERROR' }, error: 'DOOR_OPEN_ERROR' });
    expect(failing).toEqual({ runState: { currentState: 'ERROR' }, error: 'DOOR_OPEN_ERROR' });
    const cleared = mergeStatus(dryer, failing, { runState: { currentState: 'PAUSE' }, error: null });
    expect(cleared).toEqual({ runState: { currentState: 'PAUSE' } });
    expect(diffStatus(dryer, failing, cleared)).toEqual({ runState: { currentState: 'PAUSE' }, error: null });
    const washerFailing = [{ location: { locationName: 'MAIN' }, error: 'DOOR_OPEN_ERROR' }];
    expect(diffStatus(lgWasher, washerFailing, [{ location: { locationName: 'MAIN' } }])).toEqual([{ location: { locationName: 'MAIN' }, error: null }]);
  });

  it('diff is null when nothing changed', () => {
    expect(diffStatus(refrigerator, fridge, structuredClone(fridge))).toBeNull();
    expect(diffStatus(washer, [{ location: { locationName: 'MAIN' }, cycle: { cycleCount: 1 } }], [{ location: { locationName: 'MAIN' }, cycle: { cycleCount: 1 } }])).toBeNull();
  });
});
