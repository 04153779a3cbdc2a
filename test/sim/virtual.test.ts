/** A virtual appliance answers like a real one (DESIGN A.7.3): same rules, whole command, status that fits its profile. */
import { describe, expect, it } from 'vitest';
import { getModel, mergeStatus, parsedProfile, validateReport } from '../../src/catalog/index.js';
import type { DeviceStatus, JsonObject } from '../../src/catalog/types.js';
import { applyCommand } from '../../src/sim/virtual.js';

function device(deviceType: string, report: DeviceStatus = {}, modelName?: string) {
  const model = getModel(deviceType, modelName)!;
  const status = mergeStatus(parsedProfile(model), model.defaultStatus, report);
  return { model, status, apply: (command: JsonObject) => applyCommand(model, status, command) };
}

/** Applies a command that must succeed and returns the outcome, checking the new status fits the profile. */
function applied(deviceType: string, report: DeviceStatus, command: JsonObject, modelName?: string) {
  const { model, apply } = device(deviceType, report, modelName);
  const outcome = apply(command);
  if (!outcome.ok) throw new Error(`refused: ${outcome.refusal.code} ${outcome.refusal.message}`);
  expect(validateReport(parsedProfile(model), outcome.status)).toMatchObject({ ok: true });
  return outcome;
}

const MAIN = { location: { locationName: 'MAIN' } };
const washer = (mode: string) => ({ ...MAIN, operation: { washerOperationMode: mode } });

describe('a washer', () => {
  it('starts a cycle: RUNNING with its remaining time set, reported as the change only', () => {
    const outcome = applied('DEVICE_WASHER', {}, washer('START'));
    expect(outcome.report).toEqual([{ ...MAIN, runState: { currentState: 'RUNNING' }, timer: { remainMinute: 50 } }]);
    expect(outcome.status).toEqual([expect.objectContaining({ runState: { currentState: 'RUNNING' }, timer: expect.objectContaining({ remainHour: 0, remainMinute: 50, totalMinute: 50 }) })]);
  });

  it.each([
    ['STOP', 'RUNNING', 'INITIAL'],
    ['POWER_OFF', 'INITIAL', 'POWER_OFF'],
    ['POWER_ON', 'POWER_OFF', 'INITIAL'],
    ['START', 'POWER_OFF', 'RUNNING'],
  ])('%s from %s leads to %s', (mode, from, to) => {
    const outcome = applied('DEVICE_WASHER', { ...MAIN, runState: { currentState: from } }, washer(mode));
    expect((outcome.status as JsonObject[])[0]?.runState).toEqual({ currentState: to });
  });

  it('sets a readable and writable property at once with the rest of the command', () => {
    const outcome = applied('DEVICE_WASHER', {}, { ...washer('START'), timer: { relativeHourToStart: 5 } });
    expect(outcome.report).toEqual([{ ...MAIN, runState: { currentState: 'RUNNING' }, timer: { relativeHourToStart: 5, remainMinute: 50 } }]);
  });

  it('refuses what a real washer refuses, whether or not the partner asked for conditions', () => {
    const running = device('DEVICE_WASHER', { ...MAIN, runState: { currentState: 'RUNNING' } });
    expect(running.apply(washer('START'))).toEqual({ ok: false, refusal: { code: '2302', message: 'START is not valid while runState.currentState is RUNNING' } });
    const remoteOff = device('DEVICE_WASHER', { ...MAIN, remoteControlEnable: { remoteControlEnabled: false } });
    expect(remoteOff.apply(washer('START'))).toMatchObject({ ok: false, refusal: { code: '2301' } });
  });

  it('refuses an invalid command as the validation would', () => {
    expect(device('DEVICE_WASHER').apply(washer('RUN'))).toMatchObject({ ok: false, refusal: { code: '1102' } });
  });
});

describe('run-state tables of other appliances', () => {
  it.each([
    ['DEVICE_DRYER', {}, { operation: { dryerOperationMode: 'START' } }, 'RUNNING'],
    ['DEVICE_STYLER', {}, { operation: { stylerOperationMode: 'START' } }, 'RUNNING'],
    ['DEVICE_DISH_WASHER', {}, { operation: { dishWasherOperationMode: 'START' } }, 'RUNNING'],
    ['DEVICE_DISH_WASHER', { runState: { currentState: 'RUNNING' } }, { operation: { dishWasherOperationMode: 'CANCEL' } }, 'INITIAL'],
    ['DEVICE_WASHTOWER_DRYER', {}, { operation: { dryerOperationMode: 'POWER_OFF' } }, 'POWER_OFF'],
    ['DEVICE_ROBOT_CLEANER', {}, { operation: { cleanOperationMode: 'START' } }, 'WORKING'],
    ['DEVICE_ROBOT_CLEANER', { runState: { currentState: 'WORKING' } }, { operation: { cleanOperationMode: 'PAUSE' } }, 'PAUSE'],
    ['DEVICE_ROBOT_CLEANER', { runState: { currentState: 'WORKING' } }, { operation: { cleanOperationMode: 'HOMING' } }, 'HOMING'],
    ['DEVICE_ROBOT_CLEANER', { runState: { currentState: 'SLEEP' } }, { operation: { cleanOperationMode: 'WAKE_UP' } }, 'STANDBY'],
  ])('%s in %j: %j leads to %s', (deviceType, report, command, state) => {
    expect((applied(deviceType, report, command).status as JsonObject).runState).toEqual({ currentState: state });
  });

  it('preheats and cooks in the oven the command addresses, with its cook mode and temperature', () => {
    const OVEN = { location: { locationName: 'OVEN' } };
    expect(applied('DEVICE_OVEN', {}, { ...OVEN, operation: { ovenOperationMode: 'PREHEATING' } }).report).toEqual([{ ...OVEN, runState: { currentState: 'PREHEATING' } }]);
    const sdkCommand = { ...OVEN, operation: { ovenOperationMode: 'START' }, cook: { cookMode: 'ROAST' }, temperature: { targetTemperature: 400, unit: 'F' } };
    expect(applied('DEVICE_OVEN', {}, sdkCommand).report).toEqual([
      { ...OVEN, runState: { currentState: 'COOKING_IN_PROGRESS' }, cook: { cookMode: 'ROAST' }, temperature: [{ unit: 'F', targetTemperature: 400 }] },
    ]);
  });
});

describe('appliances without a run state', () => {
  it('sets readable and writable properties of addressed entries', () => {
    const command = { temperatureInUnits: { locationName: 'FREEZER', targetTemperatureC: -20 } };
    expect(applied('DEVICE_REFRIGERATOR', {}, command).report).toEqual({ temperatureInUnits: [{ locationName: 'FREEZER', targetTemperatureC: -20 }] });
  });

  it('powers an air conditioner off and on', () => {
    const off = applied('DEVICE_AIR_CONDITIONER', {}, { operation: { airConOperationMode: 'POWER_OFF' } });
    expect(off.report).toEqual({ operation: { airConOperationMode: 'POWER_OFF' } });
    const refused = applyCommand(getModel('DEVICE_AIR_CONDITIONER')!, off.status, { airFlow: { windStrength: 'LOW' } });
    expect(refused).toMatchObject({ ok: false, refusal: { code: '2304' } });
  });

  it('accepts a write-only command with no readable effect and reports nothing', () => {
    const { status, apply } = device('DEVICE_AIR_CONDITIONER');
    expect(apply({ operation: { airCleanOperationMode: 'START' } })).toEqual({ ok: true, status, report: null });
  });

  it('refuses every command to a water purifier', () => {
    expect(device('DEVICE_WATER_PURIFIER').apply({ runState: { cockState: 'NORMAL' } })).toMatchObject({ ok: false, refusal: { code: '2207' } });
  });
});
