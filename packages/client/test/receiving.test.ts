/** De-duplication by webhook-id and ordering by webhook-sequence. */
import { describe, expect, it } from 'vitest';
import { Deduplicator, SequenceOrderer, type WebhookMessage } from '@appliance-cloud/client';

function message(deviceId: string, sequence: number | null, serviceId = 's'): WebhookMessage {
  return {
    messageId: `${deviceId}-${sequence}`,
    timestamp: '2025-01-09T04:24:35.540658',
    pushType: 'DEVICE_ALIAS_CHANGED',
    push: { pushType: 'DEVICE_ALIAS_CHANGED', serviceId, deviceId, userNumber: 'u', alias: 'a' },
    delivery: { webhookId: `${deviceId}-${sequence}`, timestamp: 0, sequence },
  };
}
const sequences = (list: WebhookMessage[]) => list.map((m) => m.delivery.sequence);

describe('Deduplicator', () => {
  it('says first time once per id, and forgets the oldest past its capacity', () => {
    const seen = new Deduplicator(2);
    expect([seen.firstTime('a'), seen.firstTime('a'), seen.firstTime('b')]).toEqual([true, false, true]);
    seen.firstTime('c');
    expect(seen.firstTime('b')).toBe(false);
    expect(seen.firstTime('a')).toBe(true);
  });

  it('forgets an id on request, for the retry of a message whose handling failed', () => {
    const seen = new Deduplicator();
    seen.firstTime('a');
    seen.forget('a');
    expect([seen.firstTime('a'), seen.firstTime('a')]).toEqual([true, false]);
  });
});

describe('Deduplicator.once', () => {
  it('handles an id once; a repeat during the handling shares its outcome, and a failure is handled again', async () => {
    const seen = new Deduplicator();
    const handled: string[] = [];
    let fail!: (error: Error) => void;
    const first = seen.once('a', () => new Promise<void>((_resolve, reject) => (fail = reject)));
    const repeat = seen.once('a', () => void handled.push('repeat'));
    fail(new Error('the database is down'));
    await expect(first).rejects.toThrow('the database is down');
    await expect(repeat).rejects.toThrow('the database is down');
    await seen.once('a', () => void handled.push('retry'));
    await seen.once('a', () => void handled.push('after'));
    expect(handled).toEqual(['retry']);
  });
});

describe('SequenceOrderer', () => {
  /** Runs the message through the orderer, recording its sequence when handled. */
  const runner = (orderer: SequenceOrderer, handled: (number | null)[]) => (m: WebhookMessage, fail?: Error) =>
    orderer.run(m, () => {
      if (fail) throw fail;
      handled.push(m.delivery.sequence);
    });

  it('handles in order: a message that comes before its predecessor waits for it', async () => {
    const handled: (number | null)[] = [];
    const run = runner(new SequenceOrderer(), handled);
    await run(message('d', 1));
    const third = run(message('d', 3));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(handled).toEqual([1]);
    await run(message('d', 2));
    await third;
    expect(handled).toEqual([1, 2, 3]);
  });

  it('counts nothing whose handling failed: the server\'s retry is handled, and the next waits for it', async () => {
    const handled: (number | null)[] = [];
    const run = runner(new SequenceOrderer(), handled);
    await run(message('d', 1));
    await expect(run(message('d', 2), new Error('the database is down'))).rejects.toThrow('the database is down');
    await run(message('d', 2));
    await run(message('d', 3));
    expect(handled).toEqual([1, 2, 3]);
  });

  it('handles a message older than one handled (a resend, a recovery), and says it is late', async () => {
    const orderer = new SequenceOrderer();
    const handled: (number | null)[] = [];
    const run = runner(orderer, handled);
    await run(message('d', 4));
    await run(message('d', 5));
    expect(orderer.isLate(message('d', 2))).toBe(true);
    expect(orderer.isLate(message('d', 6))).toBe(false);
    await run(message('d', 2));
    expect(handled).toEqual([4, 5, 2]);
  });

  it('waits for a gap at most holdMs, then handles across it; holdMs 0 (one URL of two) never waits', async () => {
    const handled: (number | null)[] = [];
    const run = runner(new SequenceOrderer({ holdMs: 50 }), handled);
    await run(message('d', 1));
    const started = Date.now();
    await run(message('d', 3));
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(handled).toEqual([1, 3]);

    const pushes: (number | null)[] = [];
    const push = runner(new SequenceOrderer({ holdMs: 0 }), pushes);
    await push(message('d', 1));
    await push(message('d', 4));
    expect(pushes).toEqual([1, 4]);
  });

  it('orders each service and device on its own, and passes messages without a sequence', async () => {
    const handled: (number | null)[] = [];
    const run = runner(new SequenceOrderer(), handled);
    await run(message('d', 5, 'service-1'));
    await run(message('d', 1, 'service-2'));
    await run(message('e', 9, 'service-1'));
    await run(message('d', null));
    await run(message('d', 6, 'service-1'));
    expect(handled).toEqual([5, 1, 9, null, 6]);
  });
});
