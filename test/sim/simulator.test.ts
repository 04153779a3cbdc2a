/** The simulator's loop (STYLE habit 7): adoption, speed, stopping, restarts, connection, and commands that race a minute. */
import { afterEach, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/catalog/types.js';
import { loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';
import { DeviceNotRegistered } from '../../src/core/errors.js';
import { Simulator } from '../../src/sim/simulator.js';
import { ManualScheduler, read, simWorld, type SimWorld } from './helpers.js';

const MAIN = { location: { locationName: 'MAIN' } };
const START = { ...MAIN, operation: { washerOperationMode: 'START' } };
const STOP = { ...MAIN, operation: { washerOperationMode: 'STOP' } };

let w: SimWorld;
afterEach(() => w.close());

const stateOf = async (deviceId: string) => {
  const status = await w.status(deviceId);
  return [read(status, 'runState.currentState'), read(status, 'timer.remainMinute')];
};

/**
 * A simulator of one washer whose first write through `method` finds the id unregistered and registered again: the write
 * is of the registration it simulated, on its way while the new one came.
 */
async function racingSimulator(method: 'report' | 'setConnection') {
  w = await simWorld({ start: false });
  const washer = await w.add('DEVICE_WASHER', 'FH0D7DDNK0_WIFI');
  const { devices } = w.ctx;
  let again = false;
  const registerAgain = async (id: string) => {
    if (again) return;
    again = true;
    await devices.unregister(id, w.userNumber);
    await devices.register(w.userNumber, { deviceType: 'DEVICE_WASHER', modelName: 'FH0D7DDNK0_WIFI', alias: 'again', deviceId: id, virtual: true });
  };
  const scheduler = new ManualScheduler();
  const racing = new Simulator({
    devices: {
      get: (id) => devices.get(id),
      state: (id) => devices.state(id),
      push: (id, code, registration) => devices.push(id, code, registration),
      async report(id, report, registration) {
        if (method === 'report') await registerAgain(id);
        return devices.report(id, report, registration);
      },
      async setConnection(id, online, registration) {
        if (method === 'setConnection') await registerAgain(id);
        return devices.setConnection(id, online, registration);
      },
    },
    listVirtualDevices: async () => [await devices.get(washer)],
    listUserDevices: async () => [await devices.get(washer)],
    clock: scheduler,
    scheduler,
    timeScale: 1,
    onError: (error) => {
      throw error;
    },
  });
  return { washer, racing };
}

describe('the simulator', () => {
  it('adopts the virtual devices of the store at start and each new one within a minute; real devices are left alone', async () => {
    w = await simWorld({ start: false });
    const washer = await w.add('DEVICE_WASHER', 'FH0D7DDNK0_WIFI');
    await w.control(washer, START);
    const { device: real } = await w.ctx.devices.register(w.userNumber, { deviceType: 'DEVICE_AIR_PURIFIER', alias: 'real', virtual: false });
    await w.ctx.devices.setConnection(real.deviceId, true);
    await w.ctx.simulator.start();
    const dehumidifier = await w.add('DEVICE_DEHUMIDIFIER', 'DHUM_056905_KR');
    await w.minutes(2);
    expect(await stateOf(washer)).toEqual(['DETECTING', 48]);
    expect(read(await w.status(dehumidifier), 'humidity.currentHumidity')).toBeLessThan(80);
    expect((await w.ctx.devices.state(real.deviceId)).version).toBe(1);
    await expect(w.ctx.simulator.act(real.deviceId, 'pollute')).rejects.toMatchObject({ code: '1102', message: expect.stringContaining('real device') });
  });

  it('runs at the time scale it is given, and a new scale applies from now', async () => {
    w = await simWorld({ timeScale: 10 });
    const washer = await w.add('DEVICE_WASHER', 'FH0D7DDNK0_WIFI');
    await w.control(washer, START);
    await w.scheduler.advance(60_000);
    expect(await stateOf(washer)).toEqual(['RUNNING', 40]);
    await w.ctx.simulator.setTimeScale(60);
    expect(w.ctx.simulator.timeScale).toBe(60);
    await w.scheduler.advance(10_000);
    expect(await stateOf(washer)).toEqual(['RUNNING', 30]);
    await expect(w.ctx.simulator.setTimeScale(0)).rejects.toThrow(expect.objectContaining({ code: '1102' }));
    await expect(w.ctx.simulator.setTimeScale(Number.NaN)).rejects.toThrow(expect.objectContaining({ code: '1102' }));
    await expect(w.ctx.simulator.setTimeScale('abc')).rejects.toThrow(expect.objectContaining({ code: '1102', message: 'scale must be a number from 0.01 to 10000 (1 = real time); got "abc"' }));
    // A simulated minute every 6e9 ms would overflow Node's timers, which then fire after 1 ms: the appliances would race.
    await expect(w.ctx.simulator.setTimeScale(0.00001)).rejects.toThrow(expect.objectContaining({ code: '1102', message: 'scale must be a number from 0.01 to 10000 (1 = real time); got 0.00001' }));
    expect(w.ctx.simulator.timeScale).toBe(60);
  });

  it('stops cleanly: no minute is left scheduled, and the minute in flight finishes reporting first', async () => {
    w = await simWorld();
    const washer = await w.add('DEVICE_WASHER', 'FH0D7DDNK0_WIFI');
    await w.control(washer, START);
    const advancing = w.scheduler.advance(60_000);
    await w.ctx.simulator.stop();
    expect(w.ctx.simulator.state).toBe('stopped');
    expect(await stateOf(washer)).toEqual(['DETECTING', 49]);
    await advancing;
    expect(w.scheduler.waiting).toBe(0);
    await w.minutes(30);
    expect(await stateOf(washer)).toEqual(['DETECTING', 49]);
  });

  it('after a restart resumes a running cycle from its status, through to its completion push', async () => {
    w = await simWorld();
    const washer = await w.add('DEVICE_WASHER', 'FH0D7DDNK0_WIFI');
    await w.control(washer, START);
    await w.minutes(20);
    await w.ctx.simulator.stop();
    const scheduler = new ManualScheduler();
    const restarted = createContext(loadConfig('test', { SIM_TIME_SCALE: '1' }), w.ctx.store, scheduler, { scheduler });
    await restarted.simulator.start();
    await scheduler.advance(10 * 60_000);
    expect(await stateOf(washer)).toEqual(['RINSING', 20]);
    await scheduler.advance(20 * 60_000);
    expect(await stateOf(washer)).toEqual(['END', 0]);
    expect(await w.pushCodes(washer)).toEqual(['WASHING_IS_COMPLETE']);
    await restarted.simulator.stop();
  });

  it('stands still while a device is offline: no reports, actions refused with 1222; online again, it carries on', async () => {
    w = await simWorld();
    const washer = await w.add('DEVICE_WASHER', 'FH0D7DDNK0_WIFI');
    await w.control(washer, START);
    await w.minutes(5);
    expect((await w.ctx.simulator.act(washer, 'go-offline')).online).toBe(false);
    const before = await w.messages(washer);
    await w.minutes(10);
    expect(await w.messages(washer)).toEqual(before);
    await expect(w.ctx.simulator.act(washer, 'pause')).rejects.toMatchObject({ code: '1222' });
    await expect(w.control(washer, STOP)).rejects.toMatchObject({ code: '1222' });
    expect((await w.ctx.simulator.act(washer, 'go-online')).online).toBe(true);
    await w.minutes(1);
    expect(await stateOf(washer)).toEqual(['RUNNING', 44]);
  });

  it('refuses an action the device does not offer, naming those it does (1102)', async () => {
    w = await simWorld();
    const fan = await w.add('DEVICE_CEILING_FAN');
    await expect(w.ctx.simulator.act(fan, 'open-door')).rejects.toMatchObject({ code: '1102', message: 'action must be one of go-offline, go-online; got "open-door"' });
    await expect(w.ctx.simulator.act(fan, 'toString')).rejects.toMatchObject({ code: '1102' });
    await expect(w.ctx.simulator.runScenario('constructor', w.userNumber)).rejects.toMatchObject({ code: '1102' });
    const washer = await w.add('DEVICE_WASHER', 'FH0D7DDNK0_WIFI');
    await expect(w.ctx.simulator.act(washer, 'start', { minutes: -1 })).rejects.toMatchObject({ code: '1102', message: 'args.minutes must be a whole number of minutes ≥ 1; got -1' });
    await expect(w.ctx.simulator.act(washer, 'pause')).rejects.toMatchObject({ code: '1102', message: 'pause is not possible now: nothing is running (runState.currentState is "INITIAL")' });
    await expect(w.ctx.simulator.act(washer, 'start', { location: 'MINI' })).rejects.toMatchObject({ code: '1102', message: 'args.location must be one of MAIN; got "MINI"' });
    const dehumidifier = await w.add('DEVICE_DEHUMIDIFIER');
    await expect(w.ctx.simulator.act(dehumidifier, 'empty-bucket', { location: 'MAIN' })).rejects.toMatchObject({
      code: '1102',
      message: 'args.location is not taken: this device has no locations; got "MAIN"',
    });
  });

  it('stores its reports only on the registration it simulates: none lands on the device registered again under the id meanwhile', async () => {
    const { washer, racing } = await racingSimulator('report');
    const before = await w.ctx.devices.state(washer);
    await expect(racing.act(washer, 'start')).rejects.toBeInstanceOf(DeviceNotRegistered);
    expect(await w.ctx.devices.state(washer)).toEqual(before);
    // The registration it simulates from then on is the new one, whose reports are stored.
    expect(await racing.act(washer, 'start')).toMatchObject({ version: 2 });
  });

  it('changes the connection only of the registration it simulates: not of the device registered again under the id meanwhile', async () => {
    const { washer, racing } = await racingSimulator('setConnection');
    await expect(racing.act(washer, 'go-offline')).rejects.toBeInstanceOf(DeviceNotRegistered);
    expect((await w.ctx.devices.state(washer)).online).toBe(true);
    // The registration it simulates from then on is the new one.
    expect(await racing.act(washer, 'go-offline')).toMatchObject({ online: false });
  });

  it('keeps what a command set when the command lands while a minute is being reported', async () => {
    w = await simWorld({ start: false });
    const washer = await w.add('DEVICE_WASHER', 'FH0D7DDNK0_WIFI');
    const device = await w.ctx.devices.get(washer);
    const { devices } = w.ctx;
    let raced = false;
    const scheduler = new ManualScheduler();
    // A partner's STOP is applied (as Devices.control would) while the simulator's report waits for the device.
    const racing: Simulator = new Simulator({
      devices: {
        get: (id) => devices.get(id),
        state: (id) => devices.state(id),
        push: (id, code) => devices.push(id, code),
        setConnection: (id, online) => devices.setConnection(id, online),
        async report(id, report) {
          if (!raced) {
            raced = true;
            const outcome = await racing.sendCommand(device, (await devices.state(id)).status, STOP as JsonObject);
            if (outcome.ok) await devices.report(id, outcome.status);
          }
          return devices.report(id, report);
        },
      },
      listVirtualDevices: async () => [device],
      listUserDevices: async () => [device],
      clock: scheduler,
      scheduler,
      timeScale: 1,
      onError: (error) => {
        throw error;
      },
    });
    await racing.sendCommand(device, (await devices.state(washer)).status, START as JsonObject).then(async (o) => o.ok && devices.report(washer, o.status));
    await racing.start();
    await scheduler.advance(60_000);
    await racing.stop();
    expect(await stateOf(washer)).toEqual(['INITIAL', 0]);
    const reports = (await w.messages(washer)).map((m) => m.report);
    expect(reports.slice(-3)).toEqual([
      [{ ...MAIN, runState: { currentState: 'INITIAL' }, timer: { remainMinute: 0 } }],
      [{ ...MAIN, timer: { remainMinute: 49 } }],
      [{ ...MAIN, timer: { remainMinute: 0 } }],
    ]);
  });
});
