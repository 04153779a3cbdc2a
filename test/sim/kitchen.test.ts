/** Ovens, refrigerators and water purifiers over simulated time. */
import { afterEach, describe, expect, it } from 'vitest';
import type { DeviceStatus, JsonObject } from '../../src/catalog/types.js';
import { partOf, read, simWorld, type SimWorld } from './helpers.js';

let w: SimWorld;
afterEach(() => w.close());

const OVEN = { location: { locationName: 'OVEN' } };
const ovenDoes = (mode: string, extra = {}) => ({ ...OVEN, operation: { ovenOperationMode: mode }, ...extra });

describe('an oven', () => {
  it('preheats for 12 minutes, then shows PREHEATING_IS_DONE and raises PREHEATING_IS_COMPLETE once', async () => {
    w = await simWorld();
    const oven = await w.add('DEVICE_OVEN');
    await w.control(oven, ovenDoes('PREHEATING'));
    await w.minutes(11);
    expect(read(await w.status(oven), 'runState.currentState')).toBe('PREHEATING');
    await w.minutes(1);
    expect(read(await w.status(oven), 'runState.currentState')).toBe('PREHEATING_IS_DONE');
    await w.minutes(10);
    expect(await w.pushCodes(oven)).toEqual(['PREHEATING_IS_COMPLETE']);
  });

  it('cooks for its cook timer, raises COOKING_IS_COMPLETE, then cools down and rests', async () => {
    w = await simWorld();
    const oven = await w.add('DEVICE_OVEN');
    const cooking = await w.control(oven, ovenDoes('START', { timer: { targetHour: 1, targetMinute: 5 } }));
    expect([read(cooking, 'runState.currentState'), read(cooking, 'timer.remainHour'), read(cooking, 'timer.remainMinute')]).toEqual(['COOKING_IN_PROGRESS', 1, 5]);
    await w.minutes(64);
    expect([read(await w.status(oven), 'timer.remainHour'), read(await w.status(oven), 'timer.remainMinute')]).toEqual([0, 1]);
    await w.minutes(1);
    expect(read(await w.status(oven), 'runState.currentState')).toBe('DONE');
    expect(await w.pushCodes(oven)).toEqual(['COOKING_IS_COMPLETE']);
    await w.minutes(5);
    expect(read(await w.status(oven), 'runState.currentState')).toBe('COOLING');
    await w.minutes(15);
    expect(read(await w.status(oven), 'runState.currentState')).toBe('INITIAL');
  });

  it('without a cook timer cooks until stopped', async () => {
    w = await simWorld();
    const oven = await w.add('DEVICE_OVEN');
    await w.control(oven, ovenDoes('START'));
    await w.minutes(300);
    expect(read(await w.status(oven), 'runState.currentState')).toBe('COOKING_IN_PROGRESS');
    expect(read(await w.control(oven, ovenDoes('STOP')), 'runState.currentState')).toBe('INITIAL');
  });

  it('a double oven cooks in the location it is told, the other one untouched', async () => {
    w = await simWorld();
    const oven = await w.add('DEVICE_OVEN', 'DOUBLE_OVEN_910604_WW');
    await w.ctx.simulator.act(oven, 'start', { location: 'LOWER', minutes: 30 });
    await w.minutes(10);
    const status = await w.status(oven);
    expect([read(status, 'runState.currentState', 'LOWER'), read(status, 'timer.remainMinute', 'LOWER')]).toEqual(['COOKING_IN_PROGRESS', 20]);
    expect(read(status, 'runState.currentState', 'UPPER')).toBe('INITIAL');
    await w.minutes(20);
    expect(read(await w.status(oven), 'runState.currentState', 'LOWER')).toBe('DONE');
  });

  it("shows each cavity's target temperature in one unit, as LG does: a °C control switches that cavity and its DEVICE_STATUS says so", async () => {
    w = await simWorld();
    const oven = await w.add('DEVICE_OVEN', 'DOUBLE_OVEN_920604_WW');
    const LOWER = { location: { locationName: 'LOWER' } };
    await w.control(oven, { ...LOWER, operation: { ovenOperationMode: 'START' }, temperature: { targetTemperature: 200, unit: 'C' } });
    await w.minutes(30);
    const status = await w.status(oven);
    expect([partOf(status, 'LOWER').temperature, partOf(status, 'UPPER').temperature]).toEqual([{ targetTemperature: 200, unit: 'C' }, { targetTemperature: 350, unit: 'F' }]);
    const reports = (await w.messages(oven)).filter((m) => m.pushType === 'DEVICE_STATUS').map((m) => m.report as JsonObject[]);
    expect(reports[0]).toEqual([{ ...LOWER, runState: { currentState: 'COOKING_IN_PROGRESS' }, temperature: { targetTemperature: 200, unit: 'C' } }]);
    expect(reports.slice(1).flat().filter((entry) => 'temperature' in entry)).toEqual([]);
  });

  it('asks to be cleaned after fifty hours of cooking; a self-clean renews it', async () => {
    w = await simWorld();
    const oven = await w.add('DEVICE_OVEN');
    await w.ctx.simulator.act(oven, 'wear-out');
    await w.ctx.simulator.act(oven, 'start', { minutes: 30 });
    await w.minutes(2);
    expect(await w.pushCodes(oven)).toEqual(['TIME_TO_CLEAN']);
    await w.control(oven, ovenDoes('STOP'));
    const cleaning = await w.ctx.simulator.act(oven, 'self-clean');
    expect(read(cleaning.status, 'runState.currentState')).toBe('CLEANING');
    await w.minutes(120);
    expect(read(await w.status(oven), 'runState.currentState')).toBe('CLEANING_IS_DONE');
    await w.ctx.simulator.act(oven, 'start', { minutes: 30 });
    await w.minutes(5);
    expect(await w.pushCodes(oven)).toEqual(['TIME_TO_CLEAN']);
  });
});

describe('a refrigerator', () => {
  it('raises DOOR_IS_OPEN once when its door stays open for two minutes', async () => {
    w = await simWorld();
    const fridge = await w.add('DEVICE_REFRIGERATOR');
    const opened = await w.ctx.simulator.act(fridge, 'open-door');
    expect(opened.status).toMatchObject({ doorStatus: [{ locationName: 'MAIN', doorState: 'OPEN' }] });
    await w.minutes(1);
    expect(await w.pushCodes(fridge)).toEqual([]);
    await w.minutes(10);
    expect(await w.pushCodes(fridge)).toEqual(['DOOR_IS_OPEN']);
    await w.ctx.simulator.act(fridge, 'close-door');
    await w.ctx.simulator.act(fridge, 'open-door');
    await w.minutes(2);
    expect(await w.pushCodes(fridge)).toEqual(['DOOR_IS_OPEN', 'DOOR_IS_OPEN']);
  });

  it('shows a setpoint written in one place and unit in the others: temperature in °C, temperatureInUnits in both', async () => {
    w = await simWorld();
    const fridge = await w.add('DEVICE_REFRIGERATOR');
    const entry = (status: DeviceStatus, resource: string, place: string) => ((partOf(status)[resource] as JsonObject[]).find((e) => e.locationName === place));
    const inF = await w.control(fridge, { temperatureInUnits: { locationName: 'FRIDGE', targetTemperatureF: 39 } });
    expect(entry(inF, 'temperatureInUnits', 'FRIDGE')).toMatchObject({ targetTemperatureC: 4, targetTemperatureF: 39 });
    expect(entry(inF, 'temperature', 'FRIDGE')).toMatchObject({ targetTemperature: 4 });
    const inC = await w.control(fridge, { temperature: { locationName: 'FREEZER', targetTemperature: -18 } });
    expect(entry(inC, 'temperatureInUnits', 'FREEZER')).toMatchObject({ targetTemperatureC: -18, targetTemperatureF: 0 });
    // The other compartment is left as it was.
    expect(entry(inC, 'temperatureInUnits', 'FRIDGE')).toMatchObject({ targetTemperatureC: 4, targetTemperatureF: 39 });
  });

  it('finishes express freezing after an hour with FROZEN_IS_COMPLETE, switching it off', async () => {
    w = await simWorld();
    const fridge = await w.add('DEVICE_REFRIGERATOR');
    await w.control(fridge, { refrigeration: { expressMode: true } });
    await w.minutes(59);
    expect(read(await w.status(fridge), 'refrigeration.expressMode')).toBe(true);
    await w.minutes(1);
    expect(read(await w.status(fridge), 'refrigeration.expressMode')).toBe(false);
    expect(await w.pushCodes(fridge)).toEqual(['FROZEN_IS_COMPLETE']);
  });

  it('counts its water filter in months, asks for a new one at six, and a new one starts from zero', async () => {
    w = await simWorld();
    const fridge = await w.add('DEVICE_REFRIGERATOR');
    await w.ctx.simulator.act(fridge, 'wear-out', { counter: 'water-filter' });
    await w.minutes(1);
    expect(read(await w.status(fridge), 'waterFilterInfo.usedTime')).toBe(6);
    expect(await w.pushCodes(fridge)).toEqual(['TIME_TO_CHANGE_WATER_FILTER']);
    const renewed = await w.ctx.simulator.act(fridge, 'replace-filter');
    expect(read(renewed.status, 'waterFilterInfo.usedTime')).toBe(0);
  });

  it('wears its fresh-air filter only while the filter runs', async () => {
    w = await simWorld();
    const fridge = await w.add('DEVICE_REFRIGERATOR');
    await w.ctx.simulator.act(fridge, 'wear-out', { counter: 'air-filter' });
    await w.minutes(5);
    expect(await w.pushCodes(fridge)).toEqual([]);
    await w.control(fridge, { refrigeration: { freshAirFilter: 'AUTO' } });
    await w.minutes(2);
    expect(await w.pushCodes(fridge)).toEqual(['TIME_TO_CHANGE_FILTER']);
  });
});

describe('a water purifier', () => {
  it('refuses control (2207) but its tap sterilises itself: CLEANING for 15 minutes every 4 hours', async () => {
    w = await simWorld();
    const purifier = await w.add('DEVICE_WATER_PURIFIER');
    await expect(w.control(purifier, { runState: { cockState: 'NORMAL' } })).rejects.toMatchObject({ code: '2207' });
    const cockState = async () => read(await w.status(purifier), 'runState.cockState');
    expect(await cockState()).toBe('CLEANING');
    // The catalog's capture is mid-clean; the simulator counts from the minute it adopts the purifier.
    expect(await w.until(async () => (await cockState()) === 'NORMAL', 20)).toBe(16);
    expect(await w.until(async () => (await cockState()) === 'CLEANING', 300)).toBe(240);
    expect(await w.until(async () => (await cockState()) === 'NORMAL', 20)).toBe(15);
  });
});
