/** DESIGN A.7.2: the 2301–2305 refusals, each message naming the blocking property and its value. */
import { describe, expect, it } from 'vitest';
import { checkConditions, getModel, mergeStatus, parsedProfile } from '../../src/catalog/index.js';
import type { DeviceStatus, JsonObject } from '../../src/catalog/types.js';

/** The type's default model with `report` applied to its default status, and the check of `command` on it. */
function check(deviceType: string, report: DeviceStatus, command: JsonObject, modelName?: string) {
  const model = getModel(deviceType, modelName)!;
  const profile = parsedProfile(model);
  return checkConditions(deviceType, profile, mergeStatus(profile, model.defaultStatus, report), command);
}

const MAIN = { location: { locationName: 'MAIN' } };
const washer = (state: string, extra: JsonObject = {}) => ({ ...MAIN, runState: { currentState: state }, ...extra });
const washerDoes = (mode: string, extra: JsonObject = {}) => ({ ...MAIN, operation: { washerOperationMode: mode }, ...extra });
const OFF_MESSAGE = 'The device is powered off (runState.currentState is POWER_OFF) and the command does not power it on';

describe('2301: remote control off', () => {
  it('refuses every command while remoteControlEnable.remoteControlEnabled is false, POWER_OFF included', () => {
    const remoteOff = { ...MAIN, remoteControlEnable: { remoteControlEnabled: false } };
    for (const mode of ['START', 'STOP', 'POWER_OFF']) {
      expect(check('DEVICE_WASHER', remoteOff, washerDoes(mode))).toEqual({
        code: '2301',
        message: 'Remote control is off (remoteControlEnable.remoteControlEnabled is false)',
      });
    }
  });

  it('does not apply to types without the flag', () => {
    expect(check('DEVICE_AIR_CONDITIONER', {}, { airFlow: { windStrength: 'LOW' } })).toBeNull();
  });
});

describe('2303: error state', () => {
  it('accepts only STOP or POWER_OFF while runState.currentState is ERROR', () => {
    const refusal = { code: '2303', message: 'The device is in an error state (runState.currentState is ERROR); only STOP or POWER_OFF is accepted' };
    expect(check('DEVICE_WASHER', washer('ERROR'), washerDoes('START'))).toEqual(refusal);
    expect(check('DEVICE_WASHER', washer('ERROR'), { ...MAIN, timer: { relativeHourToStart: 2 } })).toEqual(refusal);
    expect(check('DEVICE_WASHER', washer('ERROR'), washerDoes('STOP'))).toBeNull();
    expect(check('DEVICE_WASHER', washer('ERROR'), washerDoes('POWER_OFF'))).toBeNull();
  });
});

describe('2304: powered off', () => {
  it('refuses what does not power the appliance on while runState.currentState is POWER_OFF', () => {
    expect(check('DEVICE_WASHER', washer('POWER_OFF'), { ...MAIN, timer: { relativeHourToStart: 2 } })).toEqual({ code: '2304', message: OFF_MESSAGE });
    expect(check('DEVICE_WASHER', washer('POWER_OFF'), washerDoes('POWER_OFF'))).toEqual({ code: '2304', message: OFF_MESSAGE });
    for (const mode of ['START', 'POWER_ON']) expect(check('DEVICE_WASHER', washer('POWER_OFF'), washerDoes(mode))).toBeNull();
    expect(check('DEVICE_DRYER', { runState: { currentState: 'POWER_OFF' } }, { operation: { dryerOperationMode: 'WAKE_UP' } })).toBeNull();
  });

  it("reads the power operation of air appliances, and lets a command power on and set in one go", () => {
    const off = { operation: { airConOperationMode: 'POWER_OFF' } };
    expect(check('DEVICE_AIR_CONDITIONER', off, { airFlow: { windStrength: 'LOW' } })).toEqual({
      code: '2304',
      message: 'The device is powered off (operation.airConOperationMode is POWER_OFF) and the command does not power it on',
    });
    expect(check('DEVICE_AIR_CONDITIONER', off, { operation: { airConOperationMode: 'POWER_ON' }, airFlow: { windStrength: 'LOW' } })).toBeNull();
    expect(check('DEVICE_CEILING_FAN', { operation: { ceilingfanOperationMode: 'POWER_OFF' } }, { airFlow: { windStrength: 'LOW' } })).toMatchObject({ code: '2304' });
  });

  it('takes the timers that will switch a powered-off air appliance on, and nothing else with them', () => {
    const acOff = { operation: { airConOperationMode: 'POWER_OFF' } };
    expect(check('DEVICE_AIR_CONDITIONER', acOff, { timer: { relativeHourToStart: 2, relativeMinuteToStart: 30 } }, 'RAC_910604_WW')).toBeNull();
    expect(check('DEVICE_AIR_CONDITIONER', acOff, { timer: { relativeStartTimer: 'UNSET' } }, 'RAC_910604_WW')).toBeNull();
    expect(check('DEVICE_AIR_PURIFIER', { operation: { airPurifierOperationMode: 'POWER_OFF' } }, { timer: { absoluteHourToStart: 7, absoluteMinuteToStart: 30 } }, 'AS_910604_WW')).toBeNull();
    expect(check('DEVICE_DEHUMIDIFIER', { operation: { dehumidifierOperationMode: 'POWER_OFF' } }, { timer: { absoluteHourToStart: 7 } }, 'DHUM_910604_WW')).toBeNull();
    expect(check('DEVICE_AIR_CONDITIONER', acOff, { timer: { relativeHourToStop: 2 } }, 'RAC_910604_WW')).toMatchObject({ code: '2304' });
    expect(check('DEVICE_AIR_CONDITIONER', acOff, { timer: { relativeHourToStart: 2 }, airFlow: { windStrength: 'LOW' } }, 'RAC_910604_WW')).toMatchObject({ code: '2304' });
  });
});

describe('2302: run-state conflicts', () => {
  it('refuses a delay timer once the cycle has begun: it is set before a start, not while a cycle runs', () => {
    expect(check('DEVICE_WASHTOWER_WASHER', washer('DETECTING'), { ...MAIN, timer: { relativeHourToStop: 5 } })).toEqual({
      code: '2302',
      message: 'relativeHourToStop cannot be set while runState.currentState is DETECTING',
    });
    expect(check('DEVICE_WASHER', washer('RESERVED'), { ...MAIN, timer: { relativeHourToStart: 2 } })).toMatchObject({ code: '2302' });
    expect(check('DEVICE_DISH_WASHER', { runState: { currentState: 'RUNNING' } }, { timer: { relativeHourToStart: 2 } })).toMatchObject({ code: '2302' });
    expect(check('DEVICE_WASHER', washer('END'), { ...MAIN, timer: { relativeHourToStart: 2 } })).toBeNull();
    expect(check('DEVICE_WASHER', washer('INITIAL'), washerDoes('START', { timer: { relativeHourToStart: 2 } }))).toBeNull();
  });


  it.each([
    ['DEVICE_WASHER', washer('RUNNING'), washerDoes('START'), 'START is not valid while runState.currentState is RUNNING'],
    ['DEVICE_WASHER', washer('INITIAL'), washerDoes('STOP'), 'STOP is not valid while runState.currentState is INITIAL'],
    ['DEVICE_WASHER', washer('RUNNING'), washerDoes('POWER_ON'), 'POWER_ON is not valid while runState.currentState is RUNNING'],
    ['DEVICE_DISH_WASHER', { runState: { currentState: 'END' } }, { operation: { dishWasherOperationMode: 'CANCEL' } }, 'CANCEL is not valid while runState.currentState is END'],
    ['DEVICE_ROBOT_CLEANER', { runState: { currentState: 'CHARGING' } }, { operation: { cleanOperationMode: 'PAUSE' } }, 'PAUSE is not valid while runState.currentState is CHARGING'],
    ['DEVICE_ROBOT_CLEANER', { runState: { currentState: 'WORKING' } }, { operation: { cleanOperationMode: 'RESUME' } }, 'RESUME is not valid while runState.currentState is WORKING'],
    ['DEVICE_ROBOT_CLEANER', { runState: { currentState: 'CHARGING' } }, { operation: { cleanOperationMode: 'HOMING' } }, 'HOMING is not valid while runState.currentState is CHARGING'],
    ['DEVICE_OVEN', [{ location: { locationName: 'OVEN' }, runState: { currentState: 'COOKING_IN_PROGRESS' } }], { location: { locationName: 'OVEN' }, operation: { ovenOperationMode: 'PREHEATING' } }, 'PREHEATING is not valid while runState.currentState is COOKING_IN_PROGRESS'],
  ])('%s: %j then %j', (deviceType, report, command, message) => {
    expect(check(deviceType, report, command)).toEqual({ code: '2302', message });
  });

  it.each([
    ['DEVICE_WASHER', washer('PAUSE'), washerDoes('START')],
    ['DEVICE_WASHER', washer('RINSING'), washerDoes('STOP')],
    ['DEVICE_ROBOT_CLEANER', { runState: { currentState: 'WORKING' } }, { operation: { cleanOperationMode: 'HOMING' } }],
    ['DEVICE_ROBOT_CLEANER', { runState: { currentState: 'PAUSE' } }, { operation: { cleanOperationMode: 'RESUME' } }],
    ['DEVICE_OVEN', [{ location: { locationName: 'OVEN' }, runState: { currentState: 'PREHEATING' } }], { location: { locationName: 'OVEN' }, operation: { ovenOperationMode: 'START' } }],
  ])('%s: %j then %j is fine', (deviceType, report, command) => {
    expect(check(deviceType, report, command)).toBeNull();
  });

  it('checks the location a whole-profile-array command addresses', () => {
    const status = [
      { location: { locationName: 'UPPER' }, runState: { currentState: 'COOKING_IN_PROGRESS' } },
      { location: { locationName: 'LOWER' }, runState: { currentState: 'INITIAL' } },
    ];
    const start = (locationName: string) => ({ location: { locationName }, operation: { ovenOperationMode: 'START' } });
    expect(check('DEVICE_OVEN', status, start('LOWER'), 'DOUBLE_OVEN_910604_WW')).toBeNull();
    expect(check('DEVICE_OVEN', status, start('UPPER'), 'DOUBLE_OVEN_910604_WW')).toEqual({
      code: '2302',
      message: 'START is not valid while runState.currentState is COOKING_IN_PROGRESS',
    });
  });
});

describe('2305: mode conflicts', () => {
  it('refuses a temperature target while the air conditioner only moves or cleans air', () => {
    const airClean = { airConJobMode: { currentJobMode: 'AIR_CLEAN' } };
    const setTemperature = { temperatureInUnits: { unit: 'C', coolTargetTemperature: 24 } };
    expect(check('DEVICE_AIR_CONDITIONER', airClean, setTemperature)).toEqual({
      code: '2305',
      message: 'coolTargetTemperature cannot be set while airConJobMode.currentJobMode is AIR_CLEAN',
    });
    expect(check('DEVICE_AIR_CONDITIONER', airClean, { airConJobMode: { currentJobMode: 'COOL' }, ...setTemperature })).toBeNull();
  });

  it('refuses two-set targets while two-set is disabled', () => {
    const disabled = { twoSetTemperature: { twoSetEnabled: false } };
    expect(check('DEVICE_AIR_CONDITIONER', disabled, { twoSetTemperature: { coolTargetTemperature: 25 } }, 'RAC_910604_WW')).toEqual({
      code: '2305',
      message: 'coolTargetTemperature cannot be set while twoSetTemperature.twoSetEnabled is false',
    });
  });
});

it('has no conditions for a refrigerator', () => {
  expect(check('DEVICE_REFRIGERATOR', {}, { refrigeration: { expressMode: true } })).toBeNull();
});
