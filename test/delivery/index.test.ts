import { expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { startDelivery } from '../../src/delivery/index.js';
import { systemClock } from '../../src/ids.js';
import { openStore } from '../../src/store/index.js';

// loadConfig refuses these first (test/config.test.ts); a config built otherwise meets the same refusal here.
it.each([
  [{ deliveryRetrySchedule: '5s,soon' }, /^DELIVERY_RETRY_SCHEDULE: retry schedule "5s,soon": "soon" is not a duration/],
  [{ deliveryAllowList: ['10.0.0.0/99'] }, /^DELIVERY_ALLOW_LIST: allow-list entry "10.0.0.0\/99" is not a host name/],
])('refuses to start with %j as a setting that cannot be used', async (settings, message) => {
  const store = await openStore('sqlite::memory:');
  const config = { ...loadConfig('test', {}), ...settings };
  const started = startDelivery({ store, clock: systemClock, config });
  await expect(started).rejects.toBeInstanceOf(ConfigError);
  await expect(started).rejects.toThrow(message);
  await store.close();
});
