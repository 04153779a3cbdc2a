/** Contract: what the delivery engine does with the outbox — leases, order, outcomes, endpoint health, held messages. */
import { describe, expect, it } from 'vitest';
import type { AttemptRecord, AttemptVerdict, ClaimedDelivery, ClaimRequest } from '../../../src/store/areas/delivery.js';
import type { Store } from '../../../src/store/store.js';
import { addDevice, addService, addUser, connect, freshStore, HOUR, T0 } from './world.js';

const DAY = 24 * HOUR;
const FIVE_DAYS = 5 * DAY;
const LEASE = 30_000;

export function outboxDeliveryContract(open: () => Promise<Store>): void {
  const store = freshStore(open);

  /** S1 listens to U1; each of D1 and D2 is registered (one message each), then D1 renamed twice. */
  async function fourMessages(): Promise<void> {
    await addService(store(), 'S1');
    await addUser(store(), 'U1');
    await connect(store(), 'S1', 'U1');
    await addDevice(store(), 'D1', 'U1', undefined, T0);
    await addDevice(store(), 'D2', 'U1', undefined, T0 + 1);
    await store().renameDevice('D1', 'First', T0 + 2);
    await store().renameDevice('D1', 'Second', T0 + 3);
  }

  const claim = (now: number, more: Partial<ClaimRequest> = {}) =>
    store().claimDeliveries({ owner: 'node-a', now, leaseMs: LEASE, limit: 100, perEndpointLimit: 100, inFlight: {}, ...more });

  const describeClaim = (claimed: ClaimedDelivery[]) => claimed.map((c) => [c.message.deviceId, c.message.sequence]);

  function attempt(claimed: ClaimedDelivery, verdict: AttemptVerdict, startedAt = T0 + 100): AttemptRecord {
    const responseStatus = verdict.kind === 'delivered' ? 200 : verdict.kind === 'gone' ? 410 : 500;
    return { messageId: claimed.message.messageId, fencingToken: claimed.fencingToken, startedAt, durationMs: 12.5, responseStatus, responseBody: 'ok', error: null, verdict };
  }

  const record = (attempts: AttemptRecord[], now = T0 + 200) => store().recordAttempts(attempts, now, FIVE_DAYS);
  const statuses = async () => (await store().listMessages('S1', {})).reverse().map((m) => [m.deviceId, m.sequence, m.status]);

  it('leases only the first open message of each (service, device), oldest due first, with its URL and secrets', async () => {
    await fourMessages();
    const claimed = await claim(T0 + 10);
    expect(describeClaim(claimed)).toEqual([['D1', 1], ['D2', 1]]);
    expect(claimed[0]).toMatchObject({ url: 'https://S1.example/push', secrets: ['whsec_S1'], scheduleAttempt: 1, message: { status: 'delivering', attempts: 0 } });
    // Leased messages and those queued behind them are not claimed again.
    expect(await claim(T0 + 20)).toEqual([]);
    expect(await statuses()).toEqual([['D1', 1, 'delivering'], ['D2', 1, 'delivering'], ['D1', 2, 'pending'], ['D1', 3, 'pending']]);
  });

  it('claims nothing not yet due, and respects the total and per-endpoint limits', async () => {
    await fourMessages();
    expect(await claim(T0 - 1)).toEqual([]);
    expect(describeClaim(await claim(T0 + 10, { limit: 1 }))).toEqual([['D1', 1]]);
    expect(await claim(T0 + 10, { perEndpointLimit: 2, inFlight: { S1: 2 } })).toEqual([]);
    expect(describeClaim(await claim(T0 + 10, { perEndpointLimit: 2, inFlight: { S1: 1 } }))).toEqual([['D2', 1]]);
  });

  it('skips a service at its limit rather than letting it crowd out another', async () => {
    await fourMessages();
    await addService(store(), 'S2');
    await connect(store(), 'S2', 'U1');
    await store().renameDevice('D2', 'Both listen', T0 + 10);
    // S1's two heads come first in due order, but S1 is full: the batch of one goes to S2.
    const [only] = await claim(T0 + 20, { limit: 1, perEndpointLimit: 2, inFlight: { S1: 2 } });
    expect([only?.message.serviceId, only?.message.deviceId]).toEqual(['S2', 'D2']);
  });

  it('sends an event to the event callback URL, or to the callback URL when there is none', async () => {
    await fourMessages();
    await store().upsertEventSubscription({ serviceId: 'S1', userNumber: 'U1', deviceId: 'D2', expiresAt: T0 + HOUR }, T0, 100);
    await store().applyReport('D2', { runState: { currentState: 'RUNNING' } }, { runState: { currentState: 'RUNNING' } }, T0 + 4);
    const first = await claim(T0 + 10);
    await record(first.map((c) => attempt(c, { kind: 'delivered' })));
    const event = (await claim(T0 + 300)).find((c) => c.message.kind === 'event');
    expect(event).toMatchObject({ message: { deviceId: 'D2', pushType: 'DEVICE_STATUS' }, url: 'https://S1.example/push' });

    await store().updateService('S1', { eventCallbackUrl: 'https://S1.example/events' });
    await store().resendMessage(event?.message.messageId ?? '', T0 + 400);
    expect(await claim(T0 + 500)).toMatchObject([{ url: 'https://S1.example/events' }]);
  });

  it('signs with every secret still valid: both during a rotation', async () => {
    await fourMessages();
    await store().rotateWebhookSecret('S1', 'whsec_new', T0 + 5, T0 + DAY);
    expect((await claim(T0 + 10))[0]?.secrets).toEqual(['whsec_new', 'whsec_S1']);
    // Once the lease expired, the next claim is past the old secret's 24 h.
    const later = await claim(T0 + DAY + LEASE);
    expect(later[0]?.secrets).toEqual(['whsec_new']);
  });

  it('records a success: delivered, with its attempt; the next message of the device becomes claimable', async () => {
    await fourMessages();
    const [d1] = await claim(T0 + 10);
    expect(await record([attempt(d1!, { kind: 'delivered' })])).toEqual(['delivered']);
    const message = await store().getMessage(d1!.message.messageId);
    expect(message).toMatchObject({ status: 'delivered', attempts: 1, deliveredAt: T0 + 112.5 });
    expect(await store().listAttempts([d1!.message.messageId])).toEqual([
      { messageId: d1!.message.messageId, attempt: 1, startedAt: T0 + 100, durationMs: 12.5, responseStatus: 200, responseBody: 'ok', error: null },
    ]);
    expect(describeClaim(await claim(T0 + 300))).toEqual([['D1', 2]]);
  });

  it("sends the messages of a device's reports stored in one write one at a time, in order", async () => {
    await addService(store(), 'S1');
    await addUser(store(), 'U1');
    await connect(store(), 'S1', 'U1');
    await addDevice(store(), 'D1', 'U1', undefined, T0);
    await store().upsertEventSubscription({ serviceId: 'S1', userNumber: 'U1', deviceId: 'D1', expiresAt: T0 + HOUR }, T0, 100);
    await record((await claim(T0 + 1)).map((c) => attempt(c, { kind: 'delivered' })));
    await store().applyReports('D1', [1, 2, 3].map((a) => ({ status: { a }, report: { a } })), T0 + 2);

    for (const sequence of [2, 3, 4]) {
      const claimed = await claim(T0 + 300);
      expect(describeClaim(claimed)).toEqual([['D1', sequence]]);
      await record([attempt(claimed[0]!, { kind: 'delivered' })]);
    }
    expect(await claim(T0 + 300)).toEqual([]);
  });

  it('records and claims in one call: the claim counts the slots the outcomes freed and takes the queues they moved on', async () => {
    await fourMessages();
    const [d1, d2] = await claim(T0 + 10);
    const recorded = await store().recordAndClaim([attempt(d1!, { kind: 'delivered' })], T0 + 200, FIVE_DAYS, {
      owner: 'node-a',
      now: T0 + 200,
      leaseMs: LEASE,
      limit: 100,
      perEndpointLimit: 2,
      inFlight: { S1: 1 },
    });
    expect(recorded.statuses).toEqual(['delivered']);
    expect(describeClaim(recorded.claimed)).toEqual([['D1', 2]]);
    expect(recorded.claimed[0]).toMatchObject({ url: 'https://S1.example/push', secrets: ['whsec_S1'], message: { status: 'delivering' } });
    // A fenced outcome changes nothing, and a service at its limit gets no more.
    const again = await store().recordAndClaim([attempt(d1!, { kind: 'delivered' })], T0 + 300, FIVE_DAYS, {
      owner: 'node-a',
      now: T0 + 300,
      leaseMs: LEASE,
      limit: 100,
      perEndpointLimit: 2,
      inFlight: { S1: 2 },
    });
    expect(again).toEqual({ statuses: ['fenced'], claimed: [] });
    expect(await record([attempt(d2!, { kind: 'delivered' })])).toEqual(['delivered']);
    expect(await statuses()).toEqual([['D1', 1, 'delivered'], ['D2', 1, 'delivered'], ['D1', 2, 'delivering'], ['D1', 3, 'pending']]);
  });

  it('claims no queue moved on by a batch whose other outcome disabled the service, and holds it', async () => {
    await fourMessages();
    const [d1, d2] = await claim(T0 + 10);
    const request = { owner: 'node-a', now: T0 + 200, leaseMs: LEASE, limit: 100, perEndpointLimit: 100, inFlight: {} };
    const recorded = await store().recordAndClaim([attempt(d1!, { kind: 'delivered' }), attempt(d2!, { kind: 'gone', url: d2!.url })], T0 + 200, FIVE_DAYS, request);
    expect(recorded).toEqual({ statuses: ['delivered', 'held'], claimed: [] });
    expect(await statuses()).toEqual([['D1', 1, 'delivered'], ['D2', 1, 'held'], ['D1', 2, 'held'], ['D1', 3, 'held']]);
  });

  it('puts a resent earlier message back in front of its device\'s queue', async () => {
    await fourMessages();
    const [d1] = await claim(T0 + 10, { limit: 1 });
    await record([attempt(d1!, { kind: 'delivered' })]);
    expect(await store().resendMessage(d1!.message.messageId, T0 + 300)).toBe(true);
    // D1's second message stays behind the first: D2's first is due earlier.
    expect(describeClaim(await claim(T0 + 300))).toEqual([['D2', 1], ['D1', 1]]);
  });

  it('records a failure to retry: pending at its time, and nothing behind it goes first', async () => {
    await fourMessages();
    const [d1] = await claim(T0 + 10);
    expect(await record([attempt(d1!, { kind: 'retry', nextAttemptAt: T0 + 5000 })])).toEqual(['pending']);
    expect(await store().getMessage(d1!.message.messageId)).toMatchObject({ status: 'pending', attempts: 1, nextAttemptAt: T0 + 5000 });
    expect(describeClaim(await claim(T0 + 4999))).toEqual([]);
    const again = await claim(T0 + 5000);
    expect(describeClaim(again)).toEqual([['D1', 1]]);
    expect(again[0]?.scheduleAttempt).toBe(2);
    expect(await store().getEndpointHealth('S1')).toEqual({ serviceId: 'S1', failingSince: T0 + 100, disabledAt: null, disabledReason: null });

    await record([attempt(again[0]!, { kind: 'delivered' }, T0 + 5001)], T0 + 5100);
    expect((await store().getEndpointHealth('S1'))?.failingSince).toBeNull();
    expect((await store().listAttempts([d1!.message.messageId])).map((a) => a.attempt)).toEqual([1, 2]);
  });

  it('starts the failing clock again when the service changes a callback URL: the new one has not failed yet', async () => {
    await fourMessages();
    const [d1] = await claim(T0 + 10);
    await record([attempt(d1!, { kind: 'retry', nextAttemptAt: T0 + 5000 })]);
    await store().updateService('S1', { name: 'Renamed' });
    expect((await store().getEndpointHealth('S1'))?.failingSince).toBe(T0 + 100);
    await store().updateService('S1', { eventCallbackUrl: 'https://S1.example/events' });
    expect((await store().getEndpointHealth('S1'))?.failingSince).toBeNull();
  });

  it('records an exhausted schedule as failed and kept; the device order moves on', async () => {
    await fourMessages();
    const [d1] = await claim(T0 + 10);
    expect(await record([attempt(d1!, { kind: 'exhausted' })])).toEqual(['failed']);
    expect(describeClaim(await claim(T0 + 300))).toEqual([['D1', 2]]);
    expect(await store().recoverFailed('S1', T0, T0 + 400)).toBe(1);
    expect(await store().getMessage(d1!.message.messageId)).toMatchObject({ status: 'pending', attempts: 1 });
  });

  it('fences a late finisher: an expired lease goes back to pending and a new holder wins', async () => {
    await fourMessages();
    const [late] = await claim(T0 + 10, { limit: 1 });
    expect(await claim(T0 + 10 + LEASE - 1, { owner: 'node-b' })).toMatchObject([{ message: { deviceId: 'D2' } }]);
    const [reclaimed] = await claim(T0 + 10 + LEASE, { owner: 'node-b' });
    expect(reclaimed?.message.messageId).toBe(late?.message.messageId);
    expect(reclaimed!.fencingToken).toBeGreaterThan(late!.fencingToken);

    expect(await record([attempt(late!, { kind: 'delivered' })])).toEqual(['fenced']);
    expect(await store().getMessage(late!.message.messageId)).toMatchObject({ status: 'delivering', attempts: 0 });
    expect(await store().listAttempts([late!.message.messageId])).toEqual([]);
    expect(await record([attempt(reclaimed!, { kind: 'delivered' })])).toEqual(['delivered']);
  });

  it('fences the holder of a resent message, and starts its retry schedule over', async () => {
    await fourMessages();
    const [first, d2] = await claim(T0 + 10);
    await record([attempt(first!, { kind: 'retry', nextAttemptAt: T0 + 300 }), attempt(d2!, { kind: 'delivered' })]);
    const [second] = await claim(T0 + 300);
    expect(second?.scheduleAttempt).toBe(2);
    await store().resendMessage(second!.message.messageId, T0 + 400);
    expect(await record([attempt(second!, { kind: 'delivered' })], T0 + 450)).toEqual(['fenced']);
    const [third] = await claim(T0 + 500);
    expect([third?.message.messageId, third?.scheduleAttempt]).toEqual([first?.message.messageId, 1]);
  });

  it('records one outcome per lease: a second outcome of the same message in one batch is fenced', async () => {
    await fourMessages();
    const [d1] = await claim(T0 + 10, { limit: 1 });
    expect(await record([attempt(d1!, { kind: 'delivered' }), attempt(d1!, { kind: 'retry', nextAttemptAt: T0 + 300 })])).toEqual(['delivered', 'fenced']);
    expect(await store().listAttempts([d1!.message.messageId])).toHaveLength(1);
  });

  describe('judges the outcomes of one batch in its order: an endpoint disabled by one holds those after it', () => {
    /** D1 and D2 failed once at T0 + 100 and are leased again five days later. */
    async function failingForFiveDays(): Promise<ClaimedDelivery[]> {
      await fourMessages();
      const first = await claim(T0 + 10);
      await record(first.map((c) => attempt(c, { kind: 'retry', nextAttemptAt: T0 + 300 }, T0 + 100)));
      return claim(T0 + FIVE_DAYS);
    }

    it('a failure that disables the endpoint, then a success: held, delivered; disabled, failing time cleared', async () => {
      const [d1, d2] = await failingForFiveDays();
      const outcomes = [attempt(d1!, { kind: 'exhausted' }, T0 + FIVE_DAYS + 1), attempt(d2!, { kind: 'delivered' }, T0 + FIVE_DAYS + 2)];
      expect(await record(outcomes, T0 + FIVE_DAYS + 100)).toEqual(['held', 'delivered']);
      expect(await store().getEndpointHealth('S1')).toMatchObject({ failingSince: null, disabledAt: T0 + FIVE_DAYS + 100, disabledReason: 'failing' });
    });

    it('a success, then a failure: the success ends the failing streak, so the failure starts a new one and disables nothing', async () => {
      const [d1, d2] = await failingForFiveDays();
      const outcomes = [attempt(d1!, { kind: 'delivered' }, T0 + FIVE_DAYS + 1), attempt(d2!, { kind: 'retry', nextAttemptAt: T0 + 2 * FIVE_DAYS }, T0 + FIVE_DAYS + 2)];
      expect(await record(outcomes, T0 + FIVE_DAYS + 100)).toEqual(['delivered', 'pending']);
      expect(await store().getEndpointHealth('S1')).toMatchObject({ failingSince: T0 + FIVE_DAYS + 2, disabledAt: null });
    });

    it('a 410 holds a later failure to retry, and leaves the failing time as it was', async () => {
      const [d1, d2] = await failingForFiveDays();
      const outcomes = [attempt(d1!, { kind: 'gone', url: d1!.url }, T0 + FIVE_DAYS - 2), attempt(d2!, { kind: 'retry', nextAttemptAt: T0 + 2 * FIVE_DAYS }, T0 + FIVE_DAYS - 1)];
      expect(await record(outcomes, T0 + FIVE_DAYS)).toEqual(['held', 'held']);
      expect(await store().getEndpointHealth('S1')).toMatchObject({ failingSince: T0 + 100, disabledReason: 'gone' });
    });
  });

  it('410 Gone disables the endpoint and holds the service\'s messages until it is enabled, then releases them in order', async () => {
    await fourMessages();
    const [d1, d2] = await claim(T0 + 10);
    expect(await record([attempt(d1!, { kind: 'gone', url: d1!.url }), attempt(d2!, { kind: 'retry', nextAttemptAt: T0 + 300 })])).toEqual(['held', 'held']);
    expect(await store().getEndpointHealth('S1')).toMatchObject({ disabledAt: T0 + 200, disabledReason: 'gone' });
    expect(await statuses()).toEqual([['D1', 1, 'held'], ['D2', 1, 'held'], ['D1', 2, 'held'], ['D1', 3, 'held']]);

    // A message recorded while disabled is held at the next claim; releasing alone changes nothing.
    await store().renameDevice('D2', 'Later', T0 + 500);
    expect(await claim(T0 + 600)).toEqual([]);
    expect(await store().releaseHeld(T0 + 600)).toBe(0);
    expect((await store().listMessages('S1', { status: 'held' })).length).toBe(5);

    await store().updateService('S1', { enabled: true });
    expect(await store().releaseHeld(T0 + 700, 'S1')).toBe(5);
    expect(await store().getEndpointHealth('S1')).toEqual({ serviceId: 'S1', failingSince: null, disabledAt: null, disabledReason: null });
    const released = await claim(T0 + 700);
    expect(describeClaim(released)).toEqual([['D1', 1], ['D2', 1]]);
    expect(released.map((c) => c.scheduleAttempt)).toEqual([1, 1]);
  });

  it('a 410 from a URL the service has left since the claim disables nothing, and its message is due again at once', async () => {
    await fourMessages();
    const [d1, d2] = await claim(T0 + 10);
    await store().updateService('S1', { callbackUrl: 'https://S1.example/moved' });
    expect(await record([attempt(d1!, { kind: 'gone', url: d1!.url }), attempt(d2!, { kind: 'delivered' })])).toEqual(['pending', 'delivered']);
    expect(await store().getEndpointHealth('S1')).toEqual({ serviceId: 'S1', failingSince: null, disabledAt: null, disabledReason: null });
    const again = await claim(T0 + 300);
    expect(describeClaim(again)).toEqual([['D1', 1]]);
    expect(again[0]!.url).toBe('https://S1.example/moved');
  });

  it('disables an endpoint that did nothing but fail for five days', async () => {
    await fourMessages();
    const [d1, d2] = await claim(T0 + 10);
    await record([attempt(d1!, { kind: 'retry', nextAttemptAt: T0 + 1000 }, T0 + 100)], T0 + 200);
    expect(await record([attempt(d2!, { kind: 'retry', nextAttemptAt: T0 + FIVE_DAYS + 1000 }, T0 + FIVE_DAYS)], T0 + FIVE_DAYS + 100)).toEqual(['held']);
    expect(await store().getEndpointHealth('S1')).toMatchObject({ failingSince: T0 + 100, disabledReason: 'failing' });
    expect((await statuses()).map(([, , status]) => status)).toEqual(['held', 'held', 'held', 'held']);
  });

  it('holds what is recorded while the service has no callback URL, by the next claim at the latest, and releases it in order', async () => {
    await addService(store(), 'S1');
    await store().updateService('S1', { callbackUrl: null });
    await addUser(store(), 'U1');
    await connect(store(), 'S1', 'U1');
    await addDevice(store(), 'D1', 'U1', undefined, T0);
    await store().renameDevice('D1', 'First', T0 + 1);
    expect(await claim(T0 + 10)).toEqual([]);
    expect((await store().listMessages('S1', { status: 'held' })).map((m) => m.sequence)).toEqual([2, 1]);
    await store().updateService('S1', { callbackUrl: 'https://S1.example/new' });
    expect(await store().releaseHeld(T0 + 20, 'S1')).toBe(2);
    expect(describeClaim(await claim(T0 + 20))).toEqual([['D1', 1]]);
  });

  it('holds the messages of a disabled service, or one without a callback URL, and releases them when that changes', async () => {
    await fourMessages();
    await store().updateService('S1', { enabled: false });
    expect(await claim(T0 + 10)).toEqual([]);
    expect((await store().listMessages('S1', { status: 'held' })).length).toBe(4);
    await store().updateService('S1', { enabled: true, callbackUrl: null });
    expect(await store().releaseHeld(T0 + 20)).toBe(0);
    await store().updateService('S1', { callbackUrl: 'https://S1.example/new' });
    expect(await store().releaseHeld(T0 + 30, 'S1')).toBe(4);
    expect(await claim(T0 + 30)).toMatchObject([{ url: 'https://S1.example/new' }, { url: 'https://S1.example/new' }]);
  });

  it('counts pending, delivering and held messages, and knows the oldest open one', async () => {
    await fourMessages();
    expect(await store().outboxStats()).toEqual({ pending: 4, delivering: 0, held: 0, oldestPendingAt: T0 });
    const [d1] = await claim(T0 + 10, { limit: 1 });
    await record([attempt(d1!, { kind: 'delivered' })]);
    await claim(T0 + 300, { limit: 1 });
    expect(await store().outboxStats()).toEqual({ pending: 2, delivering: 1, held: 0, oldestPendingAt: T0 + 1 });
  });

  it('tells a watcher after a commit that made messages due, until it unsubscribes', async () => {
    await fourMessages();
    let calls = 0;
    const unwatch = await store().watchOutbox(() => calls++);
    await store().renameDevice('D1', 'Watched', T0 + 10);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(calls).toBeGreaterThanOrEqual(1);
    unwatch();
    const before = calls;
    await store().renameDevice('D1', 'Unwatched', T0 + 20);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(calls).toBe(before);
  });

  it('sweeps expired event subscriptions only', async () => {
    await fourMessages();
    await store().upsertEventSubscription({ serviceId: 'S1', userNumber: 'U1', deviceId: 'D1', expiresAt: T0 + HOUR }, T0, 100);
    await store().upsertEventSubscription({ serviceId: 'S1', userNumber: 'U1', deviceId: 'D2', expiresAt: T0 + 2 * HOUR }, T0, 100);
    expect(await store().deleteExpiredEventSubscriptions(T0 + HOUR)).toBe(1);
    expect(await store().deleteExpiredEventSubscriptions(T0 + HOUR)).toBe(0);
    expect((await store().listEventSubscriptions('S1', 'U1', T0)).map((s) => s.deviceId)).toEqual(['D2']);
  });
}
