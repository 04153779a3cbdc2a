/**
 * Several nodes on one database (DESIGN F): each runs a simulator, one at a time steps the appliances
 * (a store lease), and the time scale is the deployment's whichever node was told it.
 */
import { afterEach, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createContext, type ContextWithSimulator } from '../../src/context.js';
import { read, simWorld, type SimWorld } from './helpers.js';

const START = { location: { locationName: 'MAIN' }, operation: { washerOperationMode: 'START' } };

let w: SimWorld;
let others: ContextWithSimulator[] = [];
afterEach(async () => {
  for (const other of others) await other.simulator.stop();
  others = [];
  await w.close();
});

/** Another node on the world's database, its minutes on the same scheduler, started. */
async function anotherNode(timeScale = 1): Promise<ContextWithSimulator> {
  const node = createContext(loadConfig('test', { SIM_TIME_SCALE: String(timeScale) }), w.ctx.store, w.scheduler, { scheduler: w.scheduler });
  others.push(node);
  await node.simulator.start();
  return node;
}

const stateOf = async (deviceId: string) => {
  const status = await w.status(deviceId);
  return [read(status, 'runState.currentState'), read(status, 'timer.remainMinute')];
};

it('steps each appliance once a minute however many nodes run, and another node takes over from one that stops', async () => {
  w = await simWorld();
  const second = await anotherNode();
  const third = await anotherNode();
  expect([w.ctx.simulator.stepsHere, second.simulator.stepsHere, third.simulator.stepsHere]).toEqual([true, false, false]);
  const washer = await w.add('DEVICE_WASHER', 'FH0D7DDNK0_WIFI');
  await w.control(washer, START);
  await w.minutes(10);
  expect(await stateOf(washer)).toEqual(['RUNNING', 40]);

  await w.ctx.simulator.stop();
  await second.simulator.checkTurn();
  await third.simulator.checkTurn();
  expect([second.simulator.stepsHere, third.simulator.stepsHere]).toEqual([true, false]);
  await w.scheduler.advance(10 * 60_000);
  expect(await stateOf(washer)).toEqual(['RUNNING', 30]);
});

it("takes the deployment's time scale from the node told it, and a node's SIM_TIME_SCALE when it starts", async () => {
  w = await simWorld();
  const second = await anotherNode();
  await second.simulator.setTimeScale(60);
  await w.ctx.simulator.checkTurn();
  expect(w.ctx.simulator.timeScale).toBe(60);

  // The node that steps runs at the new speed: ten minutes in ten seconds.
  const washer = await w.add('DEVICE_WASHER', 'FH0D7DDNK0_WIFI');
  await w.control(washer, START);
  await w.scheduler.advance(10_000);
  expect(await stateOf(washer)).toEqual(['RUNNING', 40]);

  await anotherNode(5);
  await w.ctx.simulator.checkTurn();
  await second.simulator.checkTurn();
  expect([w.ctx.simulator.timeScale, second.simulator.timeScale]).toEqual([5, 5]);

  // A node started without SIM_TIME_SCALE takes the deployment's scale rather than set its default.
  const unset = createContext(loadConfig('test', {}), w.ctx.store, w.scheduler, { scheduler: w.scheduler });
  others.push(unset);
  await unset.simulator.start();
  await w.ctx.simulator.checkTurn();
  expect([unset.simulator.timeScale, w.ctx.simulator.timeScale]).toEqual([5, 5]);
});
