/** The catalog as data: fourteen types, their models, default statuses a partner can control. */
import { describe, expect, it } from 'vitest';
import {
  commandFor,
  DEVICE_TYPES,
  getModel,
  hasWritableProperty,
  legalValues,
  listModels,
  listReadable,
  listWritable,
  parsedProfile,
  type ListedProperty,
  validateCommand,
  validateReport,
  valueAt,
} from '../../src/catalog/index.js';
import { applyCommand } from '../../src/sim/virtual.js';
import { shownReadable } from './fixtures.js';

const DEFAULT_MODELS = {
  DEVICE_REFRIGERATOR: 'REF_910604_WW',
  DEVICE_WASHER: 'FAFXU22027',
  DEVICE_DRYER: 'RH16KX',
  DEVICE_AIR_CONDITIONER: 'PAC_910604_WW',
  DEVICE_AIR_PURIFIER: 'AS_910604_WW',
  DEVICE_ROBOT_CLEANER: 'RBC_910604_WW',
  DEVICE_OVEN: 'OVEN_910604_WW',
  DEVICE_DISH_WASHER: 'DW_910604_WW',
  DEVICE_STYLER: 'STY_910604_WW',
  DEVICE_WATER_PURIFIER: 'WPU_910604_WW',
  DEVICE_DEHUMIDIFIER: 'DHUM_056905_KR',
  DEVICE_CEILING_FAN: 'CFAN_910604_WW',
  DEVICE_WASHTOWER_WASHER: 'FAKPK21021',
  DEVICE_WASHTOWER_DRYER: 'W3S1CVK2EVS',
};

const CONDITION_CODES = ['2301', '2302', '2303', '2304', '2305'];

describe('the catalog', () => {
  it('serves the twelve types of DESIGN A.6 and the washtower halves, in sandbox order', () => {
    expect(DEVICE_TYPES).toEqual(Object.keys(DEFAULT_MODELS));
  });

  it.each(Object.entries(DEFAULT_MODELS))('%s defaults to %s', (deviceType, modelName) => {
    expect(getModel(deviceType)?.modelName).toBe(modelName);
    expect(listModels(deviceType)[0]?.modelName).toBe(modelName);
    expect(getModel(deviceType, modelName)).toBe(getModel(deviceType));
  });

  it("starts idle laundry with no delay timer where its reference status shows none (0, below the knob's range)", () => {
    const timer = (deviceType: string, modelName: string) => {
      const status = getModel(deviceType, modelName)!.defaultStatus;
      return (Array.isArray(status) ? status[0] : status)?.timer;
    };
    expect(timer('DEVICE_WASHER', 'FAFXU22027')).toMatchObject({ relativeHourToStart: 0, relativeMinuteToStart: 0 });
    expect(timer('DEVICE_WASHTOWER_DRYER', 'W3S1CVK2EVS')).toMatchObject({ relativeHourToStart: 0, relativeHourToStop: 0 });
    expect(timer('DEVICE_STYLER', 'STY_910604_WW')).toMatchObject({ relativeHourToStop: 0 });
  });

  it('finds no model for an unknown type or name', () => {
    expect(getModel('DEVICE_HOOD')).toBeUndefined();
    expect(getModel('DEVICE_WASHER', 'NO_SUCH_MODEL')).toBeUndefined();
  });

  it('makes every type controllable except the water purifier', () => {
    for (const deviceType of DEVICE_TYPES) {
      expect(hasWritableProperty(parsedProfile(getModel(deviceType)!)), deviceType).toBe(deviceType !== 'DEVICE_WATER_PURIFIER');
    }
  });

  it('names each model once and parses each profile once', () => {
    const names = listModels().map((m) => `${m.deviceType}/${m.modelName}`);
    expect(new Set(names).size).toBe(names.length);
    for (const model of listModels()) expect(parsedProfile(model)).toBe(parsedProfile(model));
  });
});

describe.each(listModels().map((m) => [`${m.deviceType} ${m.modelName}`, m] as const))('%s', (_name, model) => {
  const profile = parsedProfile(model);

  it('has a default status that validates and holds every readable property, of a one-unit resource the unit shown', () => {
    expect(validateReport(profile, model.defaultStatus)).toEqual({ ok: true, value: model.defaultStatus });
    const shown = shownReadable(profile, model.defaultStatus);
    for (const item of shown) expect(valueAt(model.defaultStatus, item), item.path).toBeDefined();
    for (const item of listReadable(profile).filter((p) => !shown.includes(p))) {
      const sameResource = (p: ListedProperty) => p.resource === item.resource && p.address.location === item.address.location;
      expect(shown.some(sameResource), `${item.path}: another unit of it is shown`).toBe(true);
    }
  });

  it('starts ready for remote control: remote control on, powered on, no error', () => {
    for (const item of listReadable(profile)) {
      const value = valueAt(model.defaultStatus, item);
      if (item.name === 'remoteControlEnabled') expect(value, item.path).toBe(true);
      if (item.name === 'currentState') expect(['POWER_OFF', 'ERROR', 'SLEEP'], item.path).not.toContain(value);
      if (item.resource === 'operation') expect(value, item.path).not.toBe('POWER_OFF');
    }
  });

  it.runIf(hasWritableProperty(profile)).each(listWritable(profile).map((p) => [p.path, p] as const))(
    '%s accepts each legal value and the virtual appliance applies it',
    (_path, item) => {
      for (const value of legalValues(item.property)) {
        const command = commandFor(item, value);
        expect(validateCommand(profile, command), JSON.stringify(value)).toMatchObject({ ok: true });
        const outcome = applyCommand(model, model.defaultStatus, command);
        if (!outcome.ok) {
          // Only write-only operation commands may be refused, and only by the device's state.
          expect(item.property.readable, `${JSON.stringify(value)}: ${outcome.refusal.message}`).toBe(false);
          expect(CONDITION_CODES).toContain(outcome.refusal.code);
          continue;
        }
        expect(validateReport(profile, outcome.status), JSON.stringify(value)).toMatchObject({ ok: true });
        if (item.property.readable) expect(valueAt(outcome.status, item), JSON.stringify(value)).toEqual(value);
      }
    },
  );
});
