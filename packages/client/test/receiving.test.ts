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
  it('hands on in order, holds a message that comes before its predecessor, and drops repeats', () => {
    const orderer = new SequenceOrderer();
    expect(sequences(orderer.accept(message('d', 1)))).toEqual([1]);
    expect(orderer.accept(message('d', 3))).toEqual([]);
    expect(orderer.waiting).toBe(1);
    expect(sequences(orderer.accept(message('d', 2)))).toEqual([2, 3]);
    expect(orderer.accept(message('d', 2))).toEqual([]);
    expect(orderer.waiting).toBe(0);
  });

  it('orders each device on its own, passes messages without a sequence, and flushes across a gap', () => {
    const orderer = new SequenceOrderer();
    orderer.accept(message('a', 10));
    orderer.accept(message('b', 1));
    expect(orderer.accept(message('a', 13))).toEqual([]);
    expect(orderer.accept(message('a', 12))).toEqual([]);
    expect(sequences(orderer.accept(message('b', 2)))).toEqual([2]);
    expect(sequences(orderer.accept(message('a', null)))).toEqual([null]);
    expect(sequences(orderer.flush())).toEqual([12, 13]);
    expect(sequences(orderer.accept(message('a', 14)))).toEqual([14]);
  });

  it('with holdGaps false (one URL of two), hands on across a gap at once and still drops what is older', () => {
    const pushes = new SequenceOrderer({ holdGaps: false });
    expect(sequences(pushes.accept(message('d', 1)))).toEqual([1]);
    // 2 and 3 were events, delivered to the other URL.
    expect(sequences(pushes.accept(message('d', 4)))).toEqual([4]);
    expect(pushes.accept(message('d', 4))).toEqual([]);
    expect(pushes.accept(message('d', 3))).toEqual([]);
    expect(pushes.waiting).toBe(0);
  });

  it('counts each service on its own: the sequence is per service and device', () => {
    const orderer = new SequenceOrderer();
    orderer.accept(message('d', 5, 'service-1'));
    expect(sequences(orderer.accept(message('d', 1, 'service-2')))).toEqual([1]);
    expect(sequences(orderer.accept(message('d', 6, 'service-1')))).toEqual([6]);
  });
});
