/**
 * Contract: leases (areas/leases.ts), what one node of a deployment does at a time. One holder at a
 * time; the holder renews; another takes over once it has run out, or at once when given up.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import type { Store } from '../../../src/store/store.js';
import { freshStore } from './world.js';

export function leasesContract(open: () => Promise<Store>): void {
  const store = freshStore(open);

  it('is held by one holder at a time, who renews it', async () => {
    expect(await store().holdLease('devices', 'node-a', 60_000)).toBe(true);
    expect(await store().holdLease('devices', 'node-b', 60_000)).toBe(false);
    expect(await store().holdLease('devices', 'node-a', 60_000)).toBe(true);
    expect(await store().holdLease('other work', 'node-b', 60_000)).toBe(true);
  });

  it('goes to another holder once it runs out unrenewed', async () => {
    expect(await store().holdLease('devices', 'node-a', 100)).toBe(true);
    expect(await store().holdLease('devices', 'node-b', 60_000)).toBe(false);
    await sleep(150);
    expect(await store().holdLease('devices', 'node-b', 60_000)).toBe(true);
    expect(await store().holdLease('devices', 'node-a', 100)).toBe(false);
  });

  it('goes to another holder at once when given up, and only by its holder', async () => {
    expect(await store().holdLease('devices', 'node-a', 60_000)).toBe(true);
    await store().releaseLease('devices', 'node-b');
    expect(await store().holdLease('devices', 'node-b', 60_000)).toBe(false);
    await store().releaseLease('devices', 'node-a');
    expect(await store().holdLease('devices', 'node-b', 60_000)).toBe(true);
  });
}
