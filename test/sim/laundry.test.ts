/** Washers, dryers, stylers and dish washers over simulated time, seen as the messages a subscribed service gets. */
import { afterEach, describe, expect, it } from 'vitest';
import { read, simWorld, type SimWorld } from './helpers.js';

const MAIN = { location: { locationName: 'MAIN' } };
const washerDoes = (mode: string) => ({ ...MAIN, operation: { washerOperationMode: mode } });

let w: SimWorld;
afterEach(() => w.close());

/** Run states and remaining minutes, one sample per simulated minute, until `last` shows. */
async function watch(deviceId: string, last: string, limit: number): Promise<[unknown, unknown][]> {
  const seen: [unknown, unknown][] = [];
  await w.until(async () => {
    const status = await w.status(deviceId);
    seen.push([read(status, 'runState.currentState'), read(status, 'timer.remainMinute')]);
    return read(status, 'runState.currentState') === last;
  }, limit);
  return seen;
}

const distinct = (values: unknown[]) => values.filter((v, i) => v !== values[i - 1]);

describe('a washer', () => {
  it('walks DETECTING → RUNNING → RINSING → SPINNING → END, counts down, and ends with WASHING_IS_COMPLETE', async () => {
    w = await simWorld();
    const washer = await w.add('DEVICE_WASHER', 'FH0D7DDNK0_WIFI');
    await w.control(washer, washerDoes('START'));
    const seen = await watch(washer, 'END', 60);
    expect(distinct(seen.map(([state]) => state))).toEqual(['DETECTING', 'RUNNING', 'RINSING', 'SPINNING', 'END']);
    expect(seen.map(([, remain]) => remain)).toEqual([...Array.from({ length: 51 }, (_, i) => 50 - i)]);

    const messages = await w.messages(washer);
    const reports = messages.filter((m) => m.pushType === 'DEVICE_STATUS').map((m) => m.report);
    expect(reports[0]).toEqual([{ ...MAIN, runState: { currentState: 'DETECTING' }, timer: { remainMinute: 50, totalMinute: 50 } }]);
    expect(reports[1]).toEqual([{ ...MAIN, timer: { remainMinute: 49 } }]);
    expect(reports).toContainEqual([{ ...MAIN, runState: { currentState: 'RINSING' }, timer: { remainMinute: 20 } }]);
    expect(reports.at(-1)).toEqual([{ ...MAIN, cycle: { cycleCount: 1 }, runState: { currentState: 'END' }, timer: { remainMinute: 0 } }]);
    expect(messages.at(-1)).toMatchObject({ pushType: 'DEVICE_PUSH', pushCode: 'WASHING_IS_COMPLETE', deviceType: 'DEVICE_WASHER', userList: [w.userNumber] });
    expect(await w.pushCodes(washer)).toEqual(['WASHING_IS_COMPLETE']);
  });

  it('starts remotely only while Remote Start is on, with or without conditional control; the panel always can', async () => {
    w = await simWorld();
    const washer = await w.add('DEVICE_WASHER', 'FH0D7DDNK0_WIFI');
    await w.ctx.simulator.act(washer, 'remote-control-off');
    const device = await w.ctx.devices.get(washer);
    for (const conditional of [true, false]) {
      await expect(w.ctx.devices.control(device, washerDoes('START'), conditional)).rejects.toMatchObject({
        code: '2301',
        message: 'Remote control is off (remoteControlEnable.remoteControlEnabled is false)',
      });
    }
    expect(read(await w.status(washer), 'runState.currentState')).toBe('INITIAL');
    const started = await w.ctx.simulator.act(washer, 'start');
    expect(read(started.status, 'runState.currentState')).toBe('DETECTING');
    await w.ctx.simulator.act(washer, 'stop');
    await w.ctx.simulator.act(washer, 'remote-control-on');
    expect(read(await w.control(washer, washerDoes('START')), 'runState.currentState')).toBe('DETECTING');
  });

  it('waits RESERVED while its delay timer counts down, then runs', async () => {
    w = await simWorld();
    const washer = await w.add('DEVICE_WASHER', 'FAFXU22027');
    await w.control(washer, { ...MAIN, timer: { relativeHourToStart: 2 } });
    expect(read(await w.control(washer, washerDoes('START')), 'runState.currentState')).toBe('RESERVED');
    await w.minutes(90);
    const waiting = await w.status(washer);
    expect([read(waiting, 'runState.currentState'), read(waiting, 'timer.relativeHourToStart'), read(waiting, 'timer.relativeMinuteToStart')]).toEqual(['RESERVED', 0, 30]);
    await w.minutes(30);
    const running = await w.status(washer);
    expect([read(running, 'runState.currentState'), read(running, 'timer.relativeHourToStart'), read(running, 'timer.remainMinute')]).toEqual(['DETECTING', 0, 50]);
  });

  it('fails with ERROR_DURING_WASHING, refuses all but STOP in error (2303), and resumes paused once cleared', async () => {
    w = await simWorld();
    const washer = await w.add('DEVICE_WASHER', 'FH0D7DDNK0_WIFI');
    await w.control(washer, washerDoes('START'));
    await w.minutes(10);
    await w.ctx.simulator.act(washer, 'raise-error');
    expect(read(await w.status(washer), 'runState.currentState')).toBe('ERROR');
    expect(await w.pushCodes(washer)).toEqual(['ERROR_DURING_WASHING']);
    await expect(w.control(washer, washerDoes('START'))).rejects.toMatchObject({ code: '2303' });
    await w.minutes(5);
    expect(read(await w.status(washer), 'timer.remainMinute')).toBe(40);
    const cleared = await w.ctx.simulator.act(washer, 'clear-error');
    expect(read(cleared.status, 'runState.currentState')).toBe('PAUSE');
    expect(read(await w.control(washer, washerDoes('START')), 'runState.currentState')).toBe('RUNNING');
    expect(await watch(washer, 'END', 45)).toHaveLength(41);
  });
});

describe('a washtower washer', () => {
  it('given a time to finish (relativeHourToStop), waits so that the cycle ends then', async () => {
    w = await simWorld();
    const washer = await w.add('DEVICE_WASHTOWER_WASHER');
    await w.control(washer, { ...MAIN, timer: { relativeHourToStop: 3 } });
    await w.control(washer, washerDoes('START'));
    const seen = await watch(washer, 'END', 200);
    expect(seen.findIndex(([state]) => state !== 'RESERVED')).toBe(180 - 50);
    expect(seen).toHaveLength(181);
  });
});

describe.each([
  ['DEVICE_DRYER', 'RH16KX', { operation: { dryerOperationMode: 'START' } }, ['DETECTING', 'RUNNING', 'COOLING', 'END'], 'DRYING_IS_COMPLETE'],
  ['DEVICE_WASHTOWER_DRYER', 'SDH_WT4101_KR', { operation: { dryerOperationMode: 'START' } }, ['DETECTING', 'RUNNING', 'COOLING', 'END'], 'DRYING_IS_COMPLETE'],
  ['DEVICE_WASHTOWER_DRYER', 'W3S1CVK2EVS', { operation: { dryerOperationMode: 'START' } }, ['RUNNING', 'COOLING', 'END'], 'DRYING_IS_COMPLETE'],
  ['DEVICE_STYLER', 'STY_910604_WW', { operation: { stylerOperationMode: 'START' } }, ['PREHEAT', 'STEAM', 'RUNNING', 'DRYING', 'COOLING', 'COMPLETE'], 'STYLING_IS_COMPLETE'],
])('a %s (%s)', (deviceType, modelName, start, phases, done) => {
  it(`runs ${phases.join(' → ')} and raises ${done}, skipping phases its profile lacks`, async () => {
    w = await simWorld();
    const deviceId = await w.add(deviceType, modelName);
    await w.control(deviceId, start);
    const seen = await watch(deviceId, phases.at(-1) as string, 120);
    expect(distinct(seen.map(([state]) => state))).toEqual(phases);
    expect(await w.pushCodes(deviceId)).toEqual([done]);
  });
});

describe('a dish washer', () => {
  const start = { operation: { dishWasherOperationMode: 'START' } };

  it('runs as long as its course (DELICATE: 100 minutes) and raises CLEANING_IS_COMPLETE', async () => {
    w = await simWorld();
    const dishWasher = await w.add('DEVICE_DISH_WASHER');
    expect(read(await w.control(dishWasher, start), 'timer.totalHour')).toBe(1);
    const seen = await watch(dishWasher, 'END', 120);
    expect(seen).toHaveLength(101);
    expect(distinct(seen.map(([state]) => state))).toEqual(['RUNNING', 'RINSING', 'DRYING', 'END']);
    expect(await w.pushCodes(dishWasher)).toEqual(['CLEANING_IS_COMPLETE']);
  });

  it('pauses when its door opens mid-wash and continues on START once closed', async () => {
    w = await simWorld();
    const dishWasher = await w.add('DEVICE_DISH_WASHER');
    await w.control(dishWasher, start);
    await w.minutes(30);
    const opened = await w.ctx.simulator.act(dishWasher, 'open-door');
    expect([read(opened.status, 'doorStatus.doorState'), read(opened.status, 'runState.currentState')]).toEqual(['OPEN', 'PAUSE']);
    await w.minutes(10);
    expect(read(await w.status(dishWasher), 'timer.remainMinute')).toBe(10);
    await w.ctx.simulator.act(dishWasher, 'close-door');
    expect(read(await w.control(dishWasher, start), 'runState.currentState')).toBe('RUNNING');
    expect(await watch(dishWasher, 'END', 80)).toHaveLength(71);
  });

  it('runs out of rinse aid after five washes: rinseRefill shows it and RINSE_IS_NOT_ENOUGH is raised; a refill clears it', async () => {
    w = await simWorld();
    const dishWasher = await w.add('DEVICE_DISH_WASHER');
    await w.ctx.simulator.act(dishWasher, 'wear-out', { counter: 'rinse-aid' });
    await w.ctx.simulator.act(dishWasher, 'start', { minutes: 15 });
    await watch(dishWasher, 'END', 20);
    expect(read(await w.status(dishWasher), 'dishWashingStatus.rinseRefill')).toBe(true);
    expect(await w.pushCodes(dishWasher)).toEqual(['CLEANING_IS_COMPLETE', 'RINSE_IS_NOT_ENOUGH']);
    const refilled = await w.ctx.simulator.act(dishWasher, 'refill-rinse');
    expect(read(refilled.status, 'dishWashingStatus.rinseRefill')).toBe(false);
  });
});
