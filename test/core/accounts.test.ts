/** Accounts: changing a service reopens its delivery however the change arrives (admin API or CLI). */
import { describe, expect, it } from 'vitest';
import { Accounts } from '../../src/core/accounts.js';
import { LookupCache } from '../../src/core/cache.js';
import { createAddressGuard } from '../../src/delivery/address-guard.js';
import { openStore } from '../../src/store/index.js';
import { addDevice, addService, addUser, connect, freshStore, T0 } from '../store/contract/world.js';

describe('Accounts.updateService', () => {
  const store = freshStore(() => openStore('sqlite::memory:'));
  const accounts = () => new Accounts({ store: store(), lookups: new LookupCache(store()), clock: { now: () => T0 + 1_000 }, region: 'KIC', phase: 'QA', checkCallbackUrl: createAddressGuard({ phase: 'QA', allowList: [] }).checkUrl });

  /** S1 listens to U1, whose new device D1 made one message, which got 410 Gone: S1's endpoint is disabled. */
  async function goneEndpoint(): Promise<void> {
    await addService(store(), 'S1');
    await addUser(store(), 'U1');
    await connect(store(), 'S1', 'U1');
    await addDevice(store(), 'D1', 'U1');
    const [claimed] = await store().claimDeliveries({ owner: 'n', now: T0 + 10, leaseMs: 30_000, limit: 10, perEndpointLimit: 10, inFlight: {} });
    const { messageId } = claimed!.message;
    const attempt = { messageId, fencingToken: claimed!.fencingToken, startedAt: T0 + 20, durationMs: 1, responseStatus: 410, responseBody: '', error: null };
    expect(await store().recordAttempts([{ ...attempt, verdict: { kind: 'gone', url: claimed!.url } }], T0 + 30, 1e9)).toEqual(['held']);
  }

  const statuses = async () => (await store().listMessages('S1', {})).map((m) => m.status);

  it('enabled: true lifts the disabled endpoint and releases its held messages', async () => {
    await goneEndpoint();
    await accounts().updateService('S1', { enabled: true });
    expect(await store().getEndpointHealth('S1')).toMatchObject({ disabledAt: null });
    expect(await statuses()).toEqual(['pending']);
  });

  it('another change leaves a disabled endpoint disabled and its messages held', async () => {
    await goneEndpoint();
    await accounts().updateService('S1', { name: 'Renamed' });
    expect(await store().getEndpointHealth('S1')).toMatchObject({ disabledReason: 'gone' });
    expect(await statuses()).toEqual(['held']);
  });
});
