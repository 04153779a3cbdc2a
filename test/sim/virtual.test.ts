/** A virtual appliance answers like a real one (DESIGN A.7.3): same rules, whole command, status that fits its profile. */
import { describe, expect, it } from 'vitest';
import { getModel, mergeStatus, parsedProfile, validateReport } from '../../src/catalog/index.js';
import type { DeviceStatus, JsonObject } from '../../src/catalog/types.js';
import { emptyMemory } from '../../src/sim/part.js';
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
const stateOf = (status: DeviceStatus) => (Array.isArray(status) ? status[0] : status)?.runState;
const NO_DELAY = { ...MAIN, timer: { relativeHourToStart: 0 } };

describe('a washer', () => {
  it('starts a cycle in its first phase with the course time set, reported as the change only', () => {
    const outcome = applied('DEVICE_WASHER', {}, washer('START'), 'FH0D7DDNK0_WIFI');
    expect(outcome.report).toEqual([{ ...MAIN, runState: { currentState: 'DETECTING' }, timer: { remainMinute: 50, totalMinute: 50 } }]);
  });

  it('reserves the start when a command set a delay timer: in the same command or before', () => {
    const together = applied('DEVICE_WASHER', {}, { ...washer('START'), timer: { relativeHourToStart: 5 } }, 'FH0D7DDNK0_WIFI');
    expect(together.report).toEqual([{ ...MAIN, runState: { currentState: 'RESERVED' }, timer: { relativeHourToStart: 5, remainMinute: 50, totalMinute: 50 } }]);
    const { model, status } = device('DEVICE_WASHER', {}, 'FH0D7DDNK0_WIFI');
    const set = applyCommand(model, status, { ...MAIN, timer: { relativeHourToStart: 2 } });
    if (!set.ok) throw new Error('refused');
    expect(stateOf((applyCommand(model, set.status, washer('START'), set.memory) as { status: DeviceStatus }).status)).toEqual({ currentState: 'RESERVED' });
  });

  it("does not take the delay LG's documented idle status shows (the least its knob offers) for a reservation", () => {
    const outcome = applied('DEVICE_WASHTOWER_WASHER', {}, washer('START'), 'FAKPK21021');
    expect(stateOf(outcome.status)).toEqual({ currentState: 'DETECTING' });
    expect(outcome.report).toEqual([{ ...MAIN, runState: { currentState: 'DETECTING' }, timer: { relativeHourToStop: 0, remainMinute: 50, totalMinute: 50 } }]);
  });

  it.each([
    ['STOP', 'RUNNING', 'INITIAL'],
    ['POWER_OFF', 'INITIAL', 'POWER_OFF'],
    ['POWER_ON', 'POWER_OFF', 'INITIAL'],
    ['START', 'POWER_OFF', 'DETECTING'],
    ['START', 'PAUSE', 'RUNNING'],
  ])('%s from %s leads to %s', (mode, from, to) => {
    const outcome = applied('DEVICE_WASHER', { ...NO_DELAY, runState: { currentState: from }, timer: { relativeHourToStart: 0, remainMinute: 30, totalMinute: 50 } }, washer(mode));
    expect(stateOf(outcome.status)).toEqual({ currentState: to });
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
    ['DEVICE_DRYER', { timer: { relativeHourToStop: 0 } }, { operation: { dryerOperationMode: 'START' } }, 'DETECTING'],
    ['DEVICE_STYLER', { timer: { relativeHourToStop: 0 } }, { operation: { stylerOperationMode: 'START' } }, 'PREHEAT'],
    ['DEVICE_DISH_WASHER', {}, { operation: { dishWasherOperationMode: 'START' } }, 'RUNNING'],
    ['DEVICE_DISH_WASHER', { runState: { currentState: 'RUNNING' } }, { operation: { dishWasherOperationMode: 'CANCEL' } }, 'INITIAL'],
    ['DEVICE_WASHTOWER_DRYER', {}, { operation: { dryerOperationMode: 'POWER_OFF' } }, 'POWER_OFF'],
    ['DEVICE_ROBOT_CLEANER', {}, { operation: { cleanOperationMode: 'START' } }, 'WORKING'],
    ['DEVICE_ROBOT_CLEANER', { runState: { currentState: 'WORKING' } }, { operation: { cleanOperationMode: 'PAUSE' } }, 'PAUSE'],
    ['DEVICE_ROBOT_CLEANER', { runState: { currentState: 'PAUSE' } }, { operation: { cleanOperationMode: 'START' } }, 'WORKING'],
    ['DEVICE_ROBOT_CLEANER', { runState: { currentState: 'WORKING' } }, { operation: { cleanOperationMode: 'HOMING' } }, 'HOMING'],
    ['DEVICE_ROBOT_CLEANER', { runState: { currentState: 'SLEEP' } }, { operation: { cleanOperationMode: 'WAKE_UP' } }, 'STANDBY'],
  ])('%s in %j: %j leads to %s', (deviceType, report, command, state) => {
    expect(stateOf(applied(deviceType, report, command).status)).toEqual({ currentState: state });
  });

  it('a dish washer told to start with its door open pauses at once, as opening the door mid-wash would', () => {
    expect(stateOf(applied('DEVICE_DISH_WASHER', { doorStatus: { doorState: 'OPEN' } }, { operation: { dishWasherOperationMode: 'START' } }).status)).toEqual({ currentState: 'PAUSE' });
  });

  it('preheats and cooks in the oven the command addresses, with its cook mode, temperature and cook timer', () => {
    const OVEN = { location: { locationName: 'OVEN' } };
    expect(applied('DEVICE_OVEN', {}, { ...OVEN, operation: { ovenOperationMode: 'PREHEATING' } }).report).toEqual([{ ...OVEN, runState: { currentState: 'PREHEATING' } }]);
    const sdkCommand = { ...OVEN, operation: { ovenOperationMode: 'START' }, cook: { cookMode: 'ROAST' }, temperature: { targetTemperature: 400, unit: 'F' }, timer: { targetMinute: 45 } };
    expect(applied('DEVICE_OVEN', {}, sdkCommand).report).toEqual([
      { ...OVEN, runState: { currentState: 'COOKING_IN_PROGRESS' }, cook: { cookMode: 'ROAST' }, temperature: { targetTemperature: 400, unit: 'F' }, timer: { targetMinute: 45, remainMinute: 45 } },
    ]);
  });

  it("shows its temperature in one unit, as LG's oven status has it; a command in the other unit switches the unit shown", () => {
    const OVEN = { location: { locationName: 'OVEN' } };
    const oven = device('DEVICE_OVEN');
    expect((oven.status as JsonObject[])[0]?.temperature).toEqual({ targetTemperature: 350, unit: 'F' });
    const celsius = oven.apply({ ...OVEN, temperature: { targetTemperature: 180, unit: 'C' } });
    expect(celsius).toMatchObject({ ok: true, report: [{ ...OVEN, temperature: { targetTemperature: 180, unit: 'C' } }] });
    expect(celsius.ok && (celsius.status as JsonObject[])[0]?.temperature).toEqual({ targetTemperature: 180, unit: 'C' });
    const same = oven.apply({ ...OVEN, temperature: { targetTemperature: 350, unit: 'F' } });
    expect(same).toMatchObject({ ok: true, report: null });
  });
});

describe('appliances without a run state', () => {
  it('sets readable and writable properties of addressed entries, and the places that show the same setpoint', () => {
    const command = { temperatureInUnits: { locationName: 'FREEZER', targetTemperatureC: -20 } };
    expect(applied('DEVICE_REFRIGERATOR', {}, command).report).toEqual({
      temperature: [{ locationName: 'FREEZER', targetTemperature: -20 }],
      temperatureInUnits: [{ locationName: 'FREEZER', targetTemperatureC: -20, targetTemperatureF: -4 }],
    });
  });

  it('powers an air conditioner off and on', () => {
    const off = applied('DEVICE_AIR_CONDITIONER', {}, { operation: { airConOperationMode: 'POWER_OFF' } });
    expect(off.report).toEqual({ operation: { airConOperationMode: 'POWER_OFF' } });
    const refused = applyCommand(getModel('DEVICE_AIR_CONDITIONER')!, off.status, { airFlow: { windStrength: 'LOW' } });
    expect(refused).toMatchObject({ ok: false, refusal: { code: '2304' } });
  });

  it('sets the target a write-only cool target stands for, in every unit it shows', () => {
    const outcome = applied('DEVICE_AIR_CONDITIONER', {}, { temperatureInUnits: { unit: 'F', coolTargetTemperature: 68 } });
    expect(outcome.report).toEqual({
      temperature: { targetTemperature: 20 },
      temperatureInUnits: [{ unit: 'C', targetTemperature: 20 }, { unit: 'F', targetTemperature: 68 }],
    });
  });

  it('remembers a write-only setting no status shows, for the rows that read it', () => {
    const { status, apply } = device('DEVICE_AIR_CONDITIONER');
    expect(apply({ operation: { airCleanOperationMode: 'START' } })).toEqual({ ok: true, status, report: null, memory: { ...emptyMemory(), flags: { airCleanOperationMode: 'START' } } });
  });

  it('arms a timer the partner sets and clears one the partner unsets', () => {
    const set = applied('DEVICE_AIR_CONDITIONER', {}, { sleepTimer: { relativeHourToStop: 2 } }, 'RAC_910604_WW');
    expect(set.report).toEqual({ sleepTimer: { relativeHourToStop: 2, relativeStopTimer: 'SET' } });
    const unset = applyCommand(getModel('DEVICE_AIR_CONDITIONER', 'RAC_910604_WW')!, set.status, { sleepTimer: { relativeStopTimer: 'UNSET' } });
    expect(unset).toMatchObject({ ok: true, report: { sleepTimer: { relativeHourToStop: 0, relativeStopTimer: 'UNSET' } } });
  });

  it('refuses every command to a water purifier', () => {
    expect(device('DEVICE_WATER_PURIFIER').apply({ runState: { cockState: 'NORMAL' } })).toMatchObject({ ok: false, refusal: { code: '2207' } });
  });
});
