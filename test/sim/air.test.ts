/** Air conditioners, air purifiers, dehumidifiers and ceiling fans over simulated time. */
import { afterEach, describe, expect, it } from 'vitest';
import type { DeviceStatus } from '../../src/catalog/types.js';
import { read, simWorld, type SimWorld } from './helpers.js';

let w: SimWorld;
afterEach(() => w.close());

const unitEntry = (status: DeviceStatus, resource: string, unit: string) =>
  ((status as Record<string, { unit: string }[]>)[resource] ?? []).find((e) => e.unit === unit);

describe('an air conditioner', () => {
  it('cools the room toward its target, half a degree a minute, shown in every unit; off, the room warms back', async () => {
    w = await simWorld();
    const ac = await w.add('DEVICE_AIR_CONDITIONER', 'PAC_910604_WW');
    await w.control(ac, { temperature: { targetTemperature: 20 } });
    await w.minutes(4);
    let status = await w.status(ac);
    expect(read(status, 'temperature.currentTemperature')).toBe(23);
    expect(unitEntry(status, 'temperatureInUnits', 'C')).toEqual({ unit: 'C', currentTemperature: 23, targetTemperature: 20 });
    expect(unitEntry(status, 'temperatureInUnits', 'F')).toEqual({ unit: 'F', currentTemperature: 73, targetTemperature: 68 });
    await w.minutes(30);
    expect(read(await w.status(ac), 'temperature.currentTemperature')).toBe(20);
    await w.control(ac, { operation: { airConOperationMode: 'POWER_OFF' } });
    await w.minutes(10);
    status = await w.status(ac);
    expect(read(status, 'temperature.currentTemperature')).toBe(21);
  });

  it('dries the air in AIR_DRY and cleans it when air cleaning is on', async () => {
    w = await simWorld();
    const ac = await w.add('DEVICE_AIR_CONDITIONER', 'PAC_910604_WW');
    await w.control(ac, { airConJobMode: { currentJobMode: 'AIR_DRY' } });
    await w.minutes(10);
    expect(read(await w.status(ac), 'airQualitySensor.humidity')).toBe(40);
    await w.ctx.simulator.act(ac, 'pollute');
    await w.control(ac, { operation: { airCleanOperationMode: 'START' } });
    await w.minutes(20);
    const status = await w.status(ac);
    expect([read(status, 'airQualitySensor.PM2'), read(status, 'airQualitySensor.totalPollution')]).toEqual([50, 3]);
    await w.minutes(30);
    expect(read(await w.status(ac), 'airQualitySensor.PM2')).toBe(4);
  });

  it('counts filter hours while on, and fills its bucket: WATER_IS_FULL stops it until emptied', async () => {
    w = await simWorld();
    const ac = await w.add('DEVICE_AIR_CONDITIONER', 'PAC_910604_WW');
    await w.minutes(120);
    expect(read(await w.status(ac), 'filterInfo.usedTime')).toBe(182);
    await w.ctx.simulator.act(ac, 'wear-out', { counter: 'bucket' });
    await w.minutes(1);
    expect(read(await w.status(ac), 'operation.airConOperationMode')).toBe('POWER_OFF');
    expect(await w.pushCodes(ac)).toEqual(['WATER_IS_FULL']);
    await w.control(ac, { operation: { airConOperationMode: 'POWER_ON' } });
    await w.minutes(1);
    expect(read(await w.status(ac), 'operation.airConOperationMode')).toBe('POWER_OFF');
    expect(await w.pushCodes(ac)).toEqual(['WATER_IS_FULL', 'WATER_IS_FULL']);
    await w.ctx.simulator.act(ac, 'empty-bucket');
    await w.control(ac, { operation: { airConOperationMode: 'POWER_ON' } });
    await w.minutes(5);
    expect(read(await w.status(ac), 'operation.airConOperationMode')).toBe('POWER_ON');
  });

  it('a sleep timer the partner sets counts down and switches it off', async () => {
    w = await simWorld();
    const ac = await w.add('DEVICE_AIR_CONDITIONER', 'RAC_910604_WW');
    const set = await w.control(ac, { sleepTimer: { relativeHourToStop: 1, relativeMinuteToStop: 30 } });
    expect(read(set, 'sleepTimer.relativeStopTimer')).toBe('SET');
    await w.minutes(45);
    expect([read(await w.status(ac), 'sleepTimer.relativeHourToStop'), read(await w.status(ac), 'sleepTimer.relativeMinuteToStop')]).toEqual([0, 45]);
    await w.minutes(45);
    const status = await w.status(ac);
    expect([read(status, 'operation.airConOperationMode'), read(status, 'sleepTimer.relativeStopTimer')]).toEqual(['POWER_OFF', 'UNSET']);
  });

  it('switched off, takes a start timer and switches itself on when it runs out', async () => {
    w = await simWorld();
    const ac = await w.add('DEVICE_AIR_CONDITIONER', 'RAC_910604_WW');
    await w.control(ac, { operation: { airConOperationMode: 'POWER_OFF' } });
    const set = await w.control(ac, { timer: { relativeHourToStart: 1, relativeMinuteToStart: 30 } });
    expect([read(set, 'operation.airConOperationMode'), read(set, 'timer.relativeStartTimer')]).toEqual(['POWER_OFF', 'SET']);
    await w.minutes(89);
    expect(read(await w.status(ac), 'operation.airConOperationMode')).toBe('POWER_OFF');
    await w.minutes(1);
    const status = await w.status(ac);
    expect([read(status, 'operation.airConOperationMode'), read(status, 'timer.relativeStartTimer')]).toEqual(['POWER_ON', 'UNSET']);
  });

  it('switched off by hand, drops its sleep timer; switched on by hand, its start timer', async () => {
    w = await simWorld();
    const ac = await w.add('DEVICE_AIR_CONDITIONER', 'RAC_910604_WW');
    await w.control(ac, { sleepTimer: { relativeHourToStop: 1 } });
    const off = await w.control(ac, { operation: { airConOperationMode: 'POWER_OFF' } });
    expect([read(off, 'sleepTimer.relativeHourToStop'), read(off, 'sleepTimer.relativeStopTimer')]).toEqual([0, 'UNSET']);
    await w.control(ac, { timer: { relativeHourToStart: 2 } });
    const on = await w.control(ac, { operation: { airConOperationMode: 'POWER_ON' } });
    expect([read(on, 'timer.relativeHourToStart'), read(on, 'timer.relativeStartTimer')]).toEqual([0, 'UNSET']);
    await w.minutes(90);
    expect(read(await w.status(ac), 'operation.airConOperationMode')).toBe('POWER_ON');
  });

  it('switched off by its sleep timer, drops its off timer too', async () => {
    w = await simWorld();
    const ac = await w.add('DEVICE_AIR_CONDITIONER', 'RAC_910604_WW');
    await w.control(ac, { sleepTimer: { relativeHourToStop: 1 }, timer: { relativeHourToStop: 3 } });
    await w.minutes(60);
    const status = await w.status(ac);
    expect(read(status, 'operation.airConOperationMode')).toBe('POWER_OFF');
    expect([read(status, 'timer.relativeHourToStop'), read(status, 'timer.relativeStopTimer')]).toEqual([0, 'UNSET']);
  });

  it('refuses by power (2304) and by mode (2305), naming the property, with or without conditional control', async () => {
    w = await simWorld();
    const ac = await w.add('DEVICE_AIR_CONDITIONER', 'RAC_910604_WW');
    const device = await w.ctx.devices.get(ac);
    await w.control(ac, { airConJobMode: { currentJobMode: 'AIR_CLEAN' } });
    for (const conditional of [true, false]) {
      await expect(w.ctx.devices.control(device, { temperature: { targetTemperature: 22 } }, conditional)).rejects.toMatchObject({
        code: '2305',
        message: 'targetTemperature cannot be set while airConJobMode.currentJobMode is AIR_CLEAN',
      });
    }
    await w.control(ac, { operation: { airConOperationMode: 'POWER_OFF' } });
    await expect(w.control(ac, { airFlow: { windStrength: 'LOW' } })).rejects.toMatchObject({ code: '2304', message: expect.stringContaining('operation.airConOperationMode is POWER_OFF') });
  });
});

describe('an air purifier', () => {
  it('raises POLLUTION_IS_HIGH when the air turns bad, then cleans it back to GOOD', async () => {
    w = await simWorld();
    const purifier = await w.add('DEVICE_AIR_PURIFIER');
    const polluted = await w.ctx.simulator.act(purifier, 'pollute');
    expect(read(polluted.status, 'airQualitySensor.totalPollutionLevel')).toBe('VERY_BAD');
    expect(await w.pushCodes(purifier)).toEqual(['POLLUTION_IS_HIGH']);
    await w.minutes(60);
    const status = await w.status(purifier);
    expect([read(status, 'airQualitySensor.PM2'), read(status, 'airQualitySensor.totalPollutionLevel')]).toEqual([3, 'GOOD']);
    expect(await w.pushCodes(purifier)).toEqual(['POLLUTION_IS_HIGH']);
  });

  it('unsets an absolute timer given -1:-1, as LG clients clear one', async () => {
    w = await simWorld();
    const purifier = await w.add('DEVICE_AIR_PURIFIER', 'AS_910604_WW');
    const set = await w.control(purifier, { timer: { absoluteHourToStop: 22, absoluteMinuteToStop: 30 } });
    expect(read(set, 'timer.absoluteStopTimer')).toBe('SET');
    const cleared = await w.control(purifier, { timer: { absoluteHourToStop: -1, absoluteMinuteToStop: -1 } });
    expect(read(cleared, 'timer.absoluteStopTimer')).toBe('UNSET');
  });

  it('switched off, lets the room’s dust come back', async () => {
    w = await simWorld();
    const purifier = await w.add('DEVICE_AIR_PURIFIER');
    await w.control(purifier, { operation: { airPurifierOperationMode: 'POWER_OFF' } });
    await w.minutes(120);
    expect(read(await w.status(purifier), 'airQualitySensor.totalPollutionLevel')).toBe('NORMAL');
  });

  it('reminds of its filter, pre-filter and water tank when they are worn out, and again when switched back on', async () => {
    w = await simWorld();
    const purifier = await w.add('DEVICE_AIR_PURIFIER');
    await w.ctx.simulator.act(purifier, 'wear-out');
    await w.minutes(1);
    expect((await w.pushCodes(purifier)).sort()).toEqual(['LACK_OF_WATER', 'TIME_TO_CHANGE_FILTER', 'TIME_TO_CLEAN_FILTER']);
    await w.ctx.simulator.act(purifier, 'refill-water');
    await w.ctx.simulator.act(purifier, 'clean-filter');
    await w.control(purifier, { operation: { airPurifierOperationMode: 'POWER_OFF' } });
    await w.minutes(1);
    await w.control(purifier, { operation: { airPurifierOperationMode: 'POWER_ON' } });
    await w.minutes(1);
    expect((await w.pushCodes(purifier)).filter((code) => code === 'TIME_TO_CHANGE_FILTER')).toHaveLength(2);
  });
});

describe('a dehumidifier', () => {
  it('dries the room to its target and stops with WATER_IS_FULL when the bucket is full', async () => {
    w = await simWorld();
    const dehumidifier = await w.add('DEVICE_DEHUMIDIFIER', 'DHUM_056905_KR');
    await w.control(dehumidifier, { humidity: { targetHumidity: 50 } });
    await w.minutes(30);
    expect(read(await w.status(dehumidifier), 'humidity.currentHumidity')).toBe(65);
    await w.minutes(60);
    expect(read(await w.status(dehumidifier), 'humidity.currentHumidity')).toBe(50);
    await w.ctx.simulator.act(dehumidifier, 'wear-out');
    await w.minutes(1);
    expect(read(await w.status(dehumidifier), 'operation.dehumidifierOperationMode')).toBe('POWER_OFF');
    expect(await w.pushCodes(dehumidifier)).toEqual(['WATER_IS_FULL']);
    await w.minutes(100);
    expect(read(await w.status(dehumidifier), 'humidity.currentHumidity')).toBe(60);
  });
});

describe('a ceiling fan', () => {
  it('turns at the strength it is told and refuses anything but POWER_ON while off (2304)', async () => {
    w = await simWorld();
    const fan = await w.add('DEVICE_CEILING_FAN');
    expect(await w.control(fan, { airFlow: { windStrength: 'TURBO' } })).toEqual({ airFlow: { windStrength: 'TURBO' }, operation: { ceilingfanOperationMode: 'POWER_ON' } });
    await w.control(fan, { operation: { ceilingfanOperationMode: 'POWER_OFF' } });
    await expect(w.control(fan, { airFlow: { windStrength: 'LOW' } })).rejects.toMatchObject({ code: '2304' });
    expect(await w.control(fan, { operation: { ceilingfanOperationMode: 'POWER_ON' } })).toMatchObject({ operation: { ceilingfanOperationMode: 'POWER_ON' } });
  });
});
