/** createContext: the one place that wires the domain services, their lookup cache and the device channels. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createContext, noGateway, type AppContext } from '../src/context.js';
import { systemClock } from '../src/ids.js';
import { demoCountry } from '../src/regions.js';
import { testStore, type TestStore } from './helpers/app.js';

describe('createContext', () => {
  const config = loadConfig('test', {});
  let db: TestStore;
  let ctx: AppContext;

  beforeEach(async () => {
    db = await testStore();
    ctx = createContext(config, db.store, systemClock, { real: noGateway });
  });
  afterEach(() => db.close());

  describe('the lookup cache', () => {
    it('is the one the services tell: a service changed through Accounts is read anew', async () => {
      const { service } = await ctx.accounts.createService({ name: 'before', allowedDevices: ['DEVICE_WASHER'] });
      expect((await ctx.lookups.getService(service.serviceId))?.name).toBe('before');
      await ctx.accounts.updateService(service.serviceId, { name: 'after' });
      expect((await ctx.lookups.getService(service.serviceId))?.name).toBe('after');
    });

    it('is the one the services tell: a device renamed through Devices is read anew', async () => {
      const user = await ctx.accounts.createUser(demoCountry(config.region));
      const { device } = await ctx.devices.register(user.userNumber, { deviceType: 'DEVICE_WASHER', alias: 'before', virtual: true });
      expect((await ctx.lookups.getDevice(device.deviceId))?.alias).toBe('before');
      await ctx.devices.rename(device.deviceId, 'after');
      expect((await ctx.lookups.getDevice(device.deviceId))?.alias).toBe('after');
    });

    it('belongs to its context: another context over the same store has its own', () => {
      const other = createContext(config, db.store, systemClock, { real: noGateway });
      expect(other.lookups).not.toBe(ctx.lookups);
    });
  });
});
