/** createContext: the one place that wires the domain services, their lookup cache and the device channels. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createContext, type AppContext } from '../src/context.js';
import { systemClock } from '../src/ids.js';
import { createLog } from '../src/logging.js';
import { demoCountry } from '../src/regions.js';
import { Simulator } from '../src/sim/simulator.js';
import type { Store } from '../src/store/store.js';
import { ManualScheduler } from './sim/helpers.js';
import { testStore, type TestStore } from './helpers/app.js';

const COMMAND = { airFlow: { windStrengthLevel: 'LOW' } };

describe('createContext', () => {
  const config = loadConfig('test', {});
  let db: TestStore;
  let ctx: AppContext;

  beforeEach(async () => {
    db = await testStore();
    ctx = createContext(config, db.store, systemClock);
  });
  afterEach(() => db.close());

  /** A dehumidifier of a new user, virtual or real; a real one is marked online as if it had connected. */
  async function dehumidifier(on: AppContext, virtual: boolean) {
    const user = await on.accounts.createUser(demoCountry(config.region));
    const { device } = await on.devices.register(user.userNumber, { deviceType: 'DEVICE_DEHUMIDIFIER', alias: 'Basement', virtual });
    if (!virtual) await on.devices.setConnection(device.deviceId, true);
    return device;
  }

  describe('the lookup cache', () => {
    it('is the one the services tell: a service changed through Accounts is read anew', async () => {
      const { service } = await ctx.accounts.createService({ name: 'before', allowedDevices: ['DEVICE_WASHER'] });
      expect((await ctx.lookups.getService(service.serviceId))?.name).toBe('before');
      await ctx.accounts.updateService(service.serviceId, { name: 'after' });
      expect((await ctx.lookups.getService(service.serviceId))?.name).toBe('after');
    });

    it('is the one the services tell: a device renamed through Devices is read anew', async () => {
      const device = await dehumidifier(ctx, true);
      expect((await ctx.lookups.getDevice(device.deviceId))?.alias).toBe('Basement');
      await ctx.devices.rename(device.deviceId, 'Cellar');
      expect((await ctx.lookups.getDevice(device.deviceId))?.alias).toBe('Cellar');
    });

    it('belongs to its context: another context over the same store has its own', () => {
      const other = createContext(config, db.store, systemClock);
      expect(other.lookups).not.toBe(ctx.lookups);
    });
  });

  describe('the simulator', () => {
    it('is not built unless asked (the admin CLI), and then a virtual device cannot be reached (2209)', async () => {
      expect(ctx.simulator).toBeNull();
      const device = await dehumidifier(ctx, true);
      await expect(ctx.devices.control(device, COMMAND, false)).rejects.toMatchObject({
        code: '2209',
        message: `No simulator runs in this process, so device ${device.deviceId} cannot be reached.`,
      });
    });

    it('is built when asked, on the scheduler given, and answers its virtual devices', async () => {
      const scheduler = new ManualScheduler();
      const simulated = createContext(config, db.store, scheduler, { scheduler });
      expect(simulated.simulator).toBeInstanceOf(Simulator);
      const device = await dehumidifier(simulated, true);
      const state = await simulated.devices.control(device, COMMAND, false);
      expect(state.status).toMatchObject(COMMAND);
    });
  });

  describe("the simulator's faults", () => {
    it("are JSON lines of the process's log, naming what failed (DESIGN E)", async () => {
      const scheduler = new ManualScheduler();
      const lines: string[] = [];
      const log = createLog('info', { write: (line) => lines.push(line) > 0 }).logger;
      // The database goes away after the simulator started: its next minute cannot read the appliances.
      let gone = false;
      const store: Store = Object.create(db.store, {
        listVirtualDevices: { value: () => (gone ? Promise.reject(new Error('database gone')) : db.store.listVirtualDevices()) },
      });
      const simulated = createContext(config, store, scheduler, { scheduler, log });
      await simulated.simulator.start();
      gone = true;
      await scheduler.advance(60_000);
      await simulated.simulator.stop();
      expect(lines.map((line) => JSON.parse(line))).toEqual([
        expect.objectContaining({ level: 50, deviceId: '*', msg: 'Simulator: the virtual appliances or its turn could not be read', err: expect.objectContaining({ message: 'database gone' }) }),
      ]);
    });
  });

  describe('the channel router', () => {
    it('answers a real device 2209 until the gateway is attached', async () => {
      const device = await dehumidifier(ctx, false);
      await expect(ctx.devices.control(device, COMMAND, false)).rejects.toMatchObject({
        code: '2209',
        message: `The device gateway has not started, so device ${device.deviceId} cannot be reached.`,
      });
    });
  });
});
