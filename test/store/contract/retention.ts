/**
 * Contract: retention (DESIGN J, MESSAGE_RETENTION). Delivered and failed messages that closed before
 * a time go, in batches, with their attempts; open messages stay however old, and old ones that closed
 * since stay as long again; each device's order keeps counting as if nothing had gone.
 */
import { expect, it } from 'vitest';
import type { AttemptVerdict } from '../../../src/store/areas/delivery.js';
import type { Store } from '../../../src/store/store.js';
import { addDevice, addService, addUser, connect, freshStore, HOUR, T0 } from './world.js';

const DAY = 24 * HOUR;

export function retentionContract(open: () => Promise<Store>): void {
  const store = freshStore(open);

  /** S1 listens to U1; D1 is registered at T0 and D2 at T0 + 1: one message each. */
  async function twoMessages(): Promise<void> {
    await addService(store(), 'S1');
    await addUser(store(), 'U1');
    await connect(store(), 'S1', 'U1');
    await addDevice(store(), 'D1', 'U1', undefined, T0);
    await addDevice(store(), 'D2', 'U1', undefined, T0 + 1);
  }

  const claim = (now: number) => store().claimDeliveries({ owner: 'node-a', now, leaseMs: 30_000, limit: 100, perEndpointLimit: 100, inFlight: {} });

  /** Claims at `now` and settles each message claimed with the verdict its device gets. */
  async function settle(now: number, verdicts: Record<string, AttemptVerdict>): Promise<string[]> {
    const claimed = await claim(now);
    const attempts = claimed.map((c) => {
      const verdict = verdicts[c.message.deviceId] ?? { kind: 'delivered' };
      const responseStatus = verdict.kind === 'delivered' ? 200 : 500;
      return { messageId: c.message.messageId, fencingToken: c.fencingToken, startedAt: now, durationMs: 1, responseStatus, responseBody: '', error: null, verdict };
    });
    await store().recordAttempts(attempts, now + 1, 5 * DAY);
    return claimed.map((c) => c.message.messageId);
  }

  const statuses = async (serviceId = 'S1') => (await store().listMessages(serviceId, {})).reverse().map((m) => [m.deviceId, m.sequence, m.status]);

  it('deletes delivered and failed messages closed before the time, with their attempts, and nothing newer', async () => {
    await twoMessages();
    const settled = await settle(T0 + 10, { D2: { kind: 'exhausted' } });
    await store().renameDevice('D1', 'Later', T0 + 2 * DAY);
    await settle(T0 + 2 * DAY + 10, {});
    expect(await statuses()).toEqual([['D1', 1, 'delivered'], ['D2', 1, 'failed'], ['D1', 2, 'delivered']]);

    expect(await store().deleteOldMessages(T0 + DAY, 100)).toBe(2);

    expect(await statuses()).toEqual([['D1', 2, 'delivered']]);
    expect(await store().listAttempts(settled)).toEqual([]);
    expect(await store().getMessage(settled[0]!)).toBeUndefined();
    expect(await store().resendMessage(settled[0]!, T0 + 3 * DAY)).toBe(false);
  });

  it('never deletes an open message, however old: pending, delivering or held', async () => {
    await twoMessages();
    await store().renameDevice('D1', 'Behind the first', T0 + 2);
    await addService(store(), 'S2');
    await connect(store(), 'S2', 'U1');
    await store().updateService('S2', { enabled: false });
    await addDevice(store(), 'D3', 'U1', undefined, T0 + 3);
    await claim(T0 + 10);
    const before = [await statuses('S1'), await statuses('S2')];
    expect(before).toEqual([
      [['D1', 1, 'delivering'], ['D2', 1, 'delivering'], ['D1', 2, 'pending'], ['D3', 1, 'delivering']],
      [['D3', 1, 'held']],
    ]);

    expect(await store().deleteOldMessages(T0 + 100 * DAY, 100)).toBe(0);

    expect([await statuses('S1'), await statuses('S2')]).toEqual(before);
  });

  it('keeps a message recorded before the time that closed after it: held a week, delivered today, it is kept from today', async () => {
    await twoMessages();
    // D1's message is delivered at once; D2's fails at its first attempt and then, resent, is delivered two days on.
    const [, second] = await settle(T0 + 10, { D2: { kind: 'exhausted' } });
    await store().resendMessage(second!, T0 + 2 * DAY);
    await settle(T0 + 2 * DAY + 10, {});

    expect(await store().deleteOldMessages(T0 + DAY, 100)).toBe(1);
    expect(await statuses()).toEqual([['D2', 1, 'delivered']]);
    expect(await store().deleteOldMessages(T0 + 3 * DAY, 100)).toBe(1);
  });

  it('deletes at most `limit` messages at a time, the first closed first', async () => {
    await twoMessages();
    await settle(T0 + 10, {});
    expect(await store().deleteOldMessages(T0 + DAY, 1)).toBe(1);
    expect(await statuses()).toEqual([['D2', 1, 'delivered']]);
    expect(await store().deleteOldMessages(T0 + DAY, 1)).toBe(1);
    expect(await store().deleteOldMessages(T0 + DAY, 1)).toBe(0);
  });

  it("keeps counting a device's order after its old messages are gone, and sends its next message", async () => {
    await twoMessages();
    await settle(T0 + 10, {});
    expect(await store().deleteOldMessages(T0 + DAY, 100)).toBe(2);

    await store().renameDevice('D1', 'After the sweep', T0 + 2 * DAY);
    expect(await statuses()).toEqual([['D1', 2, 'pending']]);
    expect((await claim(T0 + 2 * DAY + 10)).map((c) => [c.message.deviceId, c.message.sequence])).toEqual([['D1', 2]]);
  });
}
