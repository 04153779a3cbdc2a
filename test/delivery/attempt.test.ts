import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { attemptRecord, deliveryHeaders, judge } from '../../src/delivery/attempt.js';
import type { AttemptOutcome } from '../../src/delivery/sender.js';
import { newWebhookSecret, verify } from '../../src/delivery/sign.js';
import type { ClaimedDelivery } from '../../src/store/areas/delivery.js';

const SCHEDULE = [5_000, 300_000];
const middle = (): number => 0.5;
const NOW = Date.UTC(2026, 0, 1, 12);
const HOOK_URL = 'https://hooks.example/push';

const outcome = (fields: Partial<AttemptOutcome>): AttemptOutcome => ({ ok: false, status: 500, body: null, durationMs: 40, gone: false, ...fields });

function claimed(secrets: string[]): ClaimedDelivery {
  const body = JSON.stringify({ messageId: 'AAAAAAAAAAAAAAAAAAAAAA', push: { pushType: 'DEVICE_PUSH' } });
  return {
    message: {
      messageId: 'AAAAAAAAAAAAAAAAAAAAAA', serviceId: 'svc', deviceId: 'dev', kind: 'push', pushType: 'DEVICE_PUSH', sequence: 7, body,
      status: 'delivering', attempts: 2, createdAt: NOW, nextAttemptAt: NOW, deliveredAt: null,
    },
    fencingToken: 3,
    scheduleAttempt: 1,
    url: HOOK_URL,
    secrets,
  };
}

describe('judge', () => {
  it('calls a 2xx delivered and a 410 gone, whatever is left of the schedule', () => {
    expect(judge(outcome({ ok: true, status: 204 }), 9, SCHEDULE, middle, NOW, HOOK_URL)).toEqual({ kind: 'delivered' });
    expect(judge(outcome({ status: 410, gone: true }), 1, SCHEDULE, middle, NOW, HOOK_URL)).toEqual({ kind: 'gone', url: HOOK_URL });
  });

  it('schedules the next attempt from when this one finished, jittered by ±20 %', () => {
    expect(judge(outcome({}), 1, SCHEDULE, middle, NOW, HOOK_URL)).toEqual({ kind: 'retry', nextAttemptAt: NOW + 5_000 });
    expect(judge(outcome({ status: null, error: 'ECONNREFUSED' }), 2, SCHEDULE, () => 0, NOW, HOOK_URL)).toEqual({ kind: 'retry', nextAttemptAt: NOW + 240_000 });
    expect(judge(outcome({ status: 301 }), 2, SCHEDULE, () => 1, NOW, HOOK_URL)).toEqual({ kind: 'retry', nextAttemptAt: NOW + 360_000 });
  });

  it('waits at least as long as Retry-After asks, up to the schedule\'s longest step', () => {
    expect(judge(outcome({ status: 429, retryAfterMs: 120_000 }), 1, SCHEDULE, middle, NOW, HOOK_URL)).toEqual({ kind: 'retry', nextAttemptAt: NOW + 120_000 });
    expect(judge(outcome({ status: 503, retryAfterMs: 86_400_000 }), 1, SCHEDULE, middle, NOW, HOOK_URL)).toEqual({ kind: 'retry', nextAttemptAt: NOW + 300_000 });
  });

  it('is exhausted after the schedule\'s last step', () => {
    expect(judge(outcome({}), 3, SCHEDULE, middle, NOW, HOOK_URL)).toEqual({ kind: 'exhausted' });
  });
});

describe('deliveryHeaders', () => {
  it('signs at the attempt\'s time with every secret, each one verifying alone, and carries the sequence', () => {
    const [old, current] = [newWebhookSecret(), newWebhookSecret()];
    const delivery = claimed([current, old]);
    const headers = deliveryHeaders(delivery, NOW + 999);
    expect(headers['webhook-id']).toBe('AAAAAAAAAAAAAAAAAAAAAA');
    expect(headers['webhook-timestamp']).toBe(String(NOW / 1000));
    expect(headers['webhook-sequence']).toBe('7');
    expect(headers['webhook-signature']?.split(' ')).toHaveLength(2);
    for (const secret of [old, current]) {
      expect(verify({ body: delivery.message.body, headers, secrets: [secret], clock: { now: () => NOW } })).toEqual({ ok: true });
    }
  });

  it('passes the public standardwebhooks verifier', () => {
    const secret = newWebhookSecret();
    const delivery = claimed([secret]);
    const headers = deliveryHeaders(delivery, Date.now());
    expect(new Webhook(secret).verify(delivery.message.body, headers)).toEqual(JSON.parse(delivery.message.body));
  });
});

describe('attemptRecord', () => {
  it('records the outcome under the lease it was made with', () => {
    const record = attemptRecord(claimed(['whsec_AAAA']), outcome({ body: 'oops', durationMs: 12.5 }), NOW, { kind: 'exhausted' });
    expect(record).toEqual({
      messageId: 'AAAAAAAAAAAAAAAAAAAAAA', fencingToken: 3, startedAt: NOW, durationMs: 12.5, responseStatus: 500, responseBody: 'oops', error: null, verdict: { kind: 'exhausted' },
    });
  });
});
