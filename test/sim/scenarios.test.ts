/** Named scenarios: a household's appliances acting in sequence, as the messages a partner's callback would receive. */
import { afterEach, describe, expect, it } from 'vitest';
import { read, simWorld, type SimWorld } from './helpers.js';

let w: SimWorld;
afterEach(() => w.close());

const stateOf = async (deviceId: string, location?: string) => read(await w.status(deviceId), 'runState.currentState', location);

describe('scenarios', () => {
  it('laundry-day: the washer runs, and once it has ended the dryer runs; both raise their completion push', async () => {
    w = await simWorld();
    const washer = await w.add('DEVICE_WASHER', 'FH0D7DDNK0_WIFI');
    const dryer = await w.add('DEVICE_DRYER');
    expect(await w.ctx.simulator.runScenario('laundry-day', w.userNumber)).toEqual([washer, dryer]);
    expect([await stateOf(washer), await stateOf(dryer)]).toEqual(['DETECTING', 'INITIAL']);
    expect(await w.until(async () => (await stateOf(washer)) === 'END', 60)).toBe(50);
    expect(await stateOf(dryer)).toBe('DETECTING');
    expect(await w.until(async () => (await stateOf(dryer)) === 'END', 70)).toBe(60);
    expect(await w.pushCodes(washer)).toEqual(['WASHING_IS_COMPLETE']);
    expect(await w.pushCodes(dryer)).toEqual(['DRYING_IS_COMPLETE']);
  });

  it('dinner: the oven preheats, bakes for 40 minutes, then the dish washer runs', async () => {
    w = await simWorld();
    const oven = await w.add('DEVICE_OVEN');
    const dishWasher = await w.add('DEVICE_DISH_WASHER');
    expect(await w.ctx.simulator.runScenario('dinner', w.userNumber)).toEqual([oven, dishWasher]);
    expect(await w.until(async () => (await stateOf(oven)) === 'COOKING_IN_PROGRESS', 20)).toBe(12);
    expect(await w.until(async () => (await stateOf(dishWasher)) === 'RUNNING', 50)).toBe(40);
    expect(await w.pushCodes(oven)).toEqual(['PREHEATING_IS_COMPLETE', 'COOKING_IS_COMPLETE']);
  });

  it('refuses an unknown scenario, naming the known ones, and one the user has no appliances for (1102)', async () => {
    w = await simWorld();
    await expect(w.ctx.simulator.runScenario('party', w.userNumber)).rejects.toMatchObject({
      code: '1102',
      message: 'scenario must be one of laundry-day, dinner, cleaning-day; got "party"',
    });
    await w.add('DEVICE_WASHER');
    await expect(w.ctx.simulator.runScenario('laundry-day', w.userNumber)).rejects.toMatchObject({
      code: '1102',
      message: `Scenario laundry-day needs a virtual DEVICE_DRYER or DEVICE_WASHTOWER_DRYER registered to user ${w.userNumber}.`,
    });
  });
});
