/**
 * Contract: shared settings (areas/shared-settings.ts), what every node of a deployment reads back
 * after any of them changed it.
 */
import { expect, it } from 'vitest';
import type { Store } from '../../../src/store/store.js';
import { freshStore } from './world.js';

export function sharedSettingsContract(open: () => Promise<Store>): void {
  const store = freshStore(open);

  it('answers null for a setting never written, and the last value written otherwise, by name', async () => {
    expect(await store().readSharedSetting('sim time scale')).toBeNull();
    await store().writeSharedSetting('sim time scale', '10');
    await store().writeSharedSetting('sim time scale', '60');
    await store().writeSharedSetting('another', 'x');
    expect(await store().readSharedSetting('sim time scale')).toBe('60');
    expect(await store().readSharedSetting('another')).toBe('x');
  });
}
