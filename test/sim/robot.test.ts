/** Robot cleaners over simulated time. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { read, simWorld, type SimWorld } from './helpers.js';

let w: SimWorld;
let robot: string;
const does = (mode: string) => ({ operation: { cleanOperationMode: mode } });
const state = async () => read(await w.status(robot), 'runState.currentState');
const battery = async () => [read(await w.status(robot), 'battery.percent'), read(await w.status(robot), 'battery.level')];

beforeEach(async () => {
  w = await simWorld();
  robot = await w.add('DEVICE_ROBOT_CLEANER');
});
afterEach(() => w.close());

describe('a robot cleaner', () => {
  it('charges on its dock, two percent a minute, its level following', async () => {
    await w.minutes(1);
    expect(await battery()).toEqual([2, 'MOVELESS']);
    await w.minutes(49);
    expect(await battery()).toEqual([100, 'FULL']);
  });

  it('cleans for 45 minutes draining its battery, raises CLEANING_IS_COMPLETED, drives home and charges', async () => {
    await w.minutes(50);
    expect(read(await w.control(robot, does('START')), 'runState.currentState')).toBe('WORKING');
    await w.minutes(30);
    expect([read(await w.status(robot), 'timer.runningMinute'), ...(await battery())]).toEqual([30, 70, 'HIGH']);
    await w.minutes(15);
    expect(await state()).toBe('HOMING');
    expect(await w.pushCodes(robot)).toEqual(['CLEANING_IS_COMPLETED']);
    await w.minutes(3);
    expect(await state()).toBe('CHARGING');
  });

  it('pauses, resumes with START, and is sent home by HOMING', async () => {
    await w.minutes(50);
    await w.control(robot, does('START'));
    await w.minutes(10);
    expect(read(await w.control(robot, does('PAUSE')), 'runState.currentState')).toBe('PAUSE');
    await w.minutes(10);
    expect(read(await w.status(robot), 'timer.runningMinute')).toBe(10);
    expect(read(await w.control(robot, does('START')), 'runState.currentState')).toBe('WORKING');
    await w.minutes(5);
    expect(read(await w.status(robot), 'timer.runningMinute')).toBe(15);
    expect(read(await w.control(robot, does('HOMING')), 'runState.currentState')).toBe('HOMING');
    await expect(w.control(robot, does('HOMING'))).rejects.toMatchObject({ code: '2302', message: 'HOMING is not valid while runState.currentState is HOMING' });
    await w.minutes(3);
    expect(await state()).toBe('CHARGING');
    expect(await w.pushCodes(robot)).toEqual([]);
  });

  it('heads home when its battery runs low', async () => {
    await w.minutes(10);
    await w.control(robot, does('START'));
    await w.minutes(6);
    expect(await state()).toBe('HOMING');
    expect(await w.pushCodes(robot)).toEqual([]);
  });

  it.each([
    ['the sandbox action schedule-cleaning', async () => (await w.ctx.simulator.act(robot, 'schedule-cleaning', { inMinutes: 20 })).status],
    ["a partner setting its start time (LG's setAbsoluteTimeToStart)", () => w.control(robot, { timer: { absoluteHourToStart: 8, absoluteMinuteToStart: 20 } })],
  ])('reserves a cleaning by %s, and starts it at its time with SCHEDULED_CLEANING_STARTS', async (_how, reserve) => {
    const reserved = await reserve();
    expect(read(reserved, 'runState.currentState')).toBe('RESERVATION');
    expect([read(reserved, 'timer.absoluteHourToStart'), read(reserved, 'timer.absoluteMinuteToStart')]).toEqual([8, 20]);
    await w.minutes(19);
    expect(await state()).toBe('RESERVATION');
    await w.minutes(1);
    expect(await state()).toBe('WORKING');
    expect(await w.pushCodes(robot)).toEqual(['SCHEDULED_CLEANING_STARTS']);
  });

  it('takes a reservation back when a partner sets the start time to -1, as LG clients clear one', async () => {
    await w.control(robot, { timer: { absoluteHourToStart: 8, absoluteMinuteToStart: 20 } });
    const cleared = await w.control(robot, { timer: { absoluteHourToStart: -1, absoluteMinuteToStart: -1 } });
    expect(read(cleared, 'runState.currentState')).toBe('CHARGING');
    await w.minutes(30);
    expect(await state()).toBe('CHARGING');
    expect(await w.pushCodes(robot)).toEqual([]);
  });

  it('as a home guard sees motion after 5 minutes and stops after 20', async () => {
    await w.ctx.simulator.act(robot, 'home-guard');
    await w.minutes(5);
    expect(await w.pushCodes(robot)).toEqual(['MOTION_IS_DETECTED']);
    await w.minutes(15);
    expect(await w.pushCodes(robot)).toEqual(['MOTION_IS_DETECTED', 'HOMEGUARD_IS_STOPPED']);
    expect(await state()).toBe('HOMING');
  });

  it('can fail with NEED_TO_CHECK_LOCATION and resume once the error is cleared', async () => {
    await w.minutes(50);
    await w.control(robot, does('START'));
    await w.minutes(5);
    await expect(w.ctx.simulator.act(robot, 'raise-error', { pushCode: 'NO_SUCH_PUSH' })).rejects.toMatchObject({
      code: '1102',
      message: 'args.pushCode must be one of CLEANING_IS_FAILED, NEED_TO_CHECK_LOCATION; got "NO_SUCH_PUSH"',
    });
    await w.ctx.simulator.act(robot, 'raise-error', { pushCode: 'NEED_TO_CHECK_LOCATION' });
    await expect(w.control(robot, does('START'))).rejects.toMatchObject({ code: '2303' });
    expect(read((await w.ctx.simulator.act(robot, 'clear-error')).status, 'runState.currentState')).toBe('PAUSE');
    expect(await w.pushCodes(robot)).toEqual(['NEED_TO_CHECK_LOCATION']);
  });

  it("shows one of its profile's error codes as `error` while in error, and the change that clears it says null", async () => {
    await expect(w.ctx.simulator.act(robot, 'raise-error', { error: 'DOOR_OPEN_ERROR' })).rejects.toMatchObject({
      code: '1102',
      message: expect.stringMatching(/^args\.error must be one of RIGHT_WHEEL_ERROR, MOVE_ERROR, .*; got "DOOR_OPEN_ERROR"$/),
    });
    const raised = await w.ctx.simulator.act(robot, 'raise-error', { error: 'BRUSH_ERROR' });
    expect([read(raised.status, 'runState.currentState'), (raised.status as { error?: string }).error]).toEqual(['ERROR', 'BRUSH_ERROR']);
    const cleared = await w.ctx.simulator.act(robot, 'clear-error');
    expect(cleared.status).not.toHaveProperty('error');
    expect((await w.status(robot)) as object).not.toHaveProperty('error');
    const changes = (await w.messages(robot)).filter((m) => m.pushType === 'DEVICE_STATUS').map((m) => (m.report as { error?: unknown }).error);
    expect(changes.slice(-2)).toEqual(['BRUSH_ERROR', null]);
    // Without args.error, the profile's first code.
    expect(((await w.ctx.simulator.act(robot, 'raise-error')).status as { error?: string }).error).toBe('RIGHT_WHEEL_ERROR');
  });
});
