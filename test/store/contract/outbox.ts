/** Contract: the admin views of the outbox and putting messages back to pending. */
import { expect, it } from 'vitest';
import type { Store } from '../../../src/store/store.js';
import { addDevice, addService, addUser, connect, freshStore, recorded, T0 } from './world.js';

export function outboxContract(open: () => Promise<Store>): void {
  const store = freshStore(open);

  /** S1 gets DEVICE_REGISTERED for D1 (T0), D2 (T0+1), then DEVICE_ALIAS_CHANGED for D1 (T0+2); S2 gets nothing. */
  async function threeMessages(): Promise<void> {
    await addService(store(), 'S1');
    await addService(store(), 'S2');
    await addUser(store(), 'U1');
    await connect(store(), 'S1', 'U1');
    await addDevice(store(), 'D1', 'U1', undefined, T0);
    await addDevice(store(), 'D2', 'U1', undefined, T0 + 1);
    await store().renameDevice('D1', 'Renamed', T0 + 2);
  }

  const listed = async (filter: Parameters<Store['listMessages']>[1]) =>
    (await store().listMessages('S1', filter)).map((m) => [m.deviceId, m.pushType]);

  it('lists a service\'s messages newest first, filtered by status, device, time and count', async () => {
    await threeMessages();
    expect(await listed({})).toEqual([
      ['D1', 'DEVICE_ALIAS_CHANGED'],
      ['D2', 'DEVICE_REGISTERED'],
      ['D1', 'DEVICE_REGISTERED'],
    ]);
    expect(await listed({ deviceId: 'D1' })).toEqual([
      ['D1', 'DEVICE_ALIAS_CHANGED'],
      ['D1', 'DEVICE_REGISTERED'],
    ]);
    expect(await listed({ since: T0 + 1 })).toEqual([
      ['D1', 'DEVICE_ALIAS_CHANGED'],
      ['D2', 'DEVICE_REGISTERED'],
    ]);
    expect(await listed({ limit: 1 })).toEqual([['D1', 'DEVICE_ALIAS_CHANGED']]);
    expect(await listed({ status: 'pending', deviceId: 'D2', since: T0 })).toEqual([['D2', 'DEVICE_REGISTERED']]);
    expect(await listed({ status: 'failed' })).toEqual([]);
    expect(await store().listMessages('S2', {})).toEqual([]);
  });

  it('lists several messages of one transaction newest first too', async () => {
    await threeMessages();
    await addUser(store(), 'U2');
    await connect(store(), 'S1', 'U2');
    await store().shareDevice('D1', 'U2', T0 + 3);
    await store().renameDevice('D1', 'Both', T0 + 4);
    const renames = (await store().listMessages('S1', { since: T0 + 4 })).map((m) => JSON.parse(m.body).push.userNumber);
    expect(renames).toEqual(['U2', 'U1']);
  });

  it('pages before the last message of a page in the listing\'s order, also through messages of one time', async () => {
    await threeMessages();
    for (const user of ['U2', 'U3']) {
      await addUser(store(), user);
      await connect(store(), 'S1', user);
      await store().shareDevice('D1', user, T0 + 3);
    }
    // One message per user of D1, all at T0+4: pages of two end inside them.
    await store().renameDevice('D1', 'Shared', T0 + 4);
    expect((await store().listMessages('S1', { since: T0 + 4 })).map((m) => m.createdAt)).toEqual([T0 + 4, T0 + 4, T0 + 4]);
    for (const filter of [{}, { deviceId: 'D1' }, { since: T0 + 1 }, { status: 'pending' as const, deviceId: 'D2' }]) {
      const paged = [];
      let page = await store().listMessages('S1', { ...filter, limit: 2 });
      while (page.length > 0) {
        paged.push(...page);
        page = await store().listMessages('S1', { ...filter, limit: 2, before: page.at(-1)!.messageId });
      }
      expect(paged, JSON.stringify(filter)).toEqual(await store().listMessages('S1', filter));
    }
  });

  it('reads one message by id', async () => {
    await threeMessages();
    const [newest] = await store().listMessages('S1', { limit: 1 });
    expect(newest).toBeDefined();
    expect(await store().getMessage(newest?.messageId ?? '')).toEqual(newest);
    expect(await store().getMessage('AAAAAAAAAAAAAAAAAAAAAA')).toBeUndefined();
  });

  it('has no attempts for messages not yet sent', async () => {
    await threeMessages();
    const ids = (await store().listMessages('S1', {})).map((m) => m.messageId);
    expect(await store().listAttempts(ids)).toEqual([]);
    expect(await store().listAttempts([])).toEqual([]);
  });

  it('resends a message: pending, due now, same id and body', async () => {
    await threeMessages();
    const [first] = await recorded(store(), 'S1');
    const messageId = first?.message.messageId ?? '';
    expect(await store().resendMessage(messageId, T0 + 50)).toBe(true);
    expect(await store().getMessage(messageId)).toEqual({ ...first?.message, status: 'pending', nextAttemptAt: T0 + 50 });
    expect(await store().resendMessage('AAAAAAAAAAAAAAAAAAAAAA', T0)).toBe(false);
  });

  it('recovers nothing when nothing failed', async () => {
    await threeMessages();
    expect(await store().recoverFailed('S1', T0, T0 + 50)).toBe(0);
    expect(await listed({ status: 'pending' })).toHaveLength(3);
  });
}
