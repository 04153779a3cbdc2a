/** The ThinQ profile grammar (reference/thinq/NOTES.md section a) as parseProfile reads it. */
import { describe, expect, it } from 'vitest';
import { parseProfile } from '../../src/catalog/index.js';
import type { JsonObject } from '../../src/catalog/types.js';
import { readJson } from './fixtures.js';

const parse = (folder: string, file = 'profile.json') => parseProfile(readJson(folder, file) as JsonObject);

describe('parseProfile', () => {
  it('reads an object of resources with push codes and errors', () => {
    const dryer = parse('dryer');
    expect(dryer.locations).toBeNull();
    expect(dryer.pushCodes).toEqual(['DRYING_IS_COMPLETE', 'DRYING_FAILED']);
    expect(dryer.errors).toContain('DOOR_OPEN_ERROR');
    expect(dryer.root?.resources.operation?.dryerOperationMode).toEqual({ type: 'enum', readable: false, writable: true, read: [], write: ['START', 'STOP', 'POWER_OFF', 'WAKE_UP'] });
  });

  it('defaults a missing range step to 1, as the dryer profile needs', () => {
    const range = { min: 3, max: 19, step: 1, except: [] };
    expect(parse('dryer').root?.resources.timer?.relativeHourToStop).toEqual({ type: 'range', readable: true, writable: true, read: range, write: range });
  });

  it('reads whole-profile arrays keyed by location.locationName', () => {
    expect(parse('oven').locations?.map((l) => l.name)).toEqual(['UPPER', 'LOWER']);
    expect(parse('washer').locations?.[0]?.set.resources.detergent?.detergentSetting).toEqual({ type: 'fixed', readable: true, writable: false, value: 'NORMAL' });
  });

  it('reads resources that are arrays of entries keyed by locationName or by a literal unit', () => {
    const fridge = parse('refrigerator').root;
    expect(fridge?.arrays.temperatureInUnits?.map((e) => [e.key, e.name])).toEqual([['locationName', 'FRIDGE'], ['locationName', 'FREEZER']]);
    expect(fridge?.arrays.temperature?.[0]?.properties.unit).toEqual({ type: 'fixed', readable: true, writable: false, value: 'C' });
    const ac = parse('air_conditioner').root;
    expect(ac?.arrays.temperatureInUnits?.map((e) => [e.key, e.name])).toEqual([['unit', 'C'], ['unit', 'F']]);
  });

  it('gives a write-only range its write bounds only', () => {
    const ac = parse('air_conditioner').root;
    expect(ac?.resources.temperature?.coolTargetTemperature).toMatchObject({ readable: false, write: { min: 18, max: 30, step: 1 }, read: null });
  });

  it('ignores extensionProperty, which stays in the profile as stored', () => {
    const raw = readJson('oven', 'profile.json') as JsonObject;
    expect(parseProfile(raw)).toEqual({ locations: expect.any(Array), root: null, pushCodes: [], errors: [] });
    expect(raw.extensionProperty).toEqual({ info: { type: 'DOUBLE' } });
  });

  it("accepts LG's spellings bool and array", () => {
    const profile = parseProfile({
      property: {
        door: { open: { type: 'bool', mode: ['r'], value: { r: [true, false] } } },
        water: { types: { type: 'array', mode: ['r'], value: { r: ['COLD', 'HOT'] } } },
      },
    });
    expect(profile.root?.resources.door?.open).toEqual({ type: 'boolean', readable: true, writable: false });
    expect(profile.root?.resources.water?.types).toEqual({ type: 'list', readable: true, writable: false, read: ['COLD', 'HOT'], write: [] });
  });

  it.each([
    [{}, 'property must be an object of resources or an array of locations; got nothing'],
    [{ property: { op: 'x' } }, 'property.op must be a resource object or an array of entries; got "x"'],
    [{ property: { op: { m: { type: 'enum', mode: ['x'] } } } }, 'property.op.m.mode must be a non-empty array of "r" and "w"; got ["x"]'],
    [{ property: { op: { m: { type: 'color', mode: ['r'] } } } }, 'property.op.m.type must be one of enum, range, boolean, number, string, list; got "color"'],
    [{ property: { op: { m: { type: 'enum', mode: ['r'] } } } }, 'property.op.m.value.r must be an array of strings; got nothing'],
    [{ property: { op: { m: { type: 'range', mode: ['w'], value: { w: { min: 5, max: 1 } } } } } }, 'property.op.m.value.w must have numbers min <= max; got {"min":5,"max":1}'],
    [{ property: [{ runState: {} }] }, 'property[0].location.locationName must be a string; got nothing'],
    [{ property: { t: [{ target: 1 }] } }, 'property.t[0] has neither a literal locationName nor a literal unit to address it by'],
    [{ property: {}, notification: { push: [1] } }, 'notification.push must be an array of strings; got [1]'],
  ])('refuses a profile outside the grammar: %j', (profile, problem) => {
    expect(() => parseProfile(profile as JsonObject)).toThrow(`Profile does not fit the ThinQ grammar: ${problem}`);
  });
});
