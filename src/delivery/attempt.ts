/** One attempt of one claimed delivery as pure functions: the request it sends and what its outcome means. */
import type { AttemptRecord, AttemptVerdict, ClaimedDelivery } from '../store/areas/delivery.js';
import { storableText } from '../store/storable.js';
import { nextAttemptDelay } from './schedule.js';
import type { AttemptOutcome } from './sender.js';
import { signatureHeaders } from './sign.js';

/** The Standard Webhooks headers, signed afresh at `nowMs` with every current secret, and the message's place in its device's order. */
export function deliveryHeaders(delivery: ClaimedDelivery, nowMs: number): Record<string, string> {
  const { message, secrets } = delivery;
  return {
    ...signatureHeaders({ messageId: message.messageId, timestamp: Math.floor(nowMs / 1000), body: message.body, secrets }),
    'webhook-sequence': String(message.sequence),
  };
}

/**
 * A 2xx is delivered and a 410 asks for the endpoint at `url` to be disabled; anything else waits for
 * the schedule's next step after `finishedAt` (jittered, stretched by Retry-After), or is exhausted.
 */
export function judge(
  outcome: AttemptOutcome,
  scheduleAttempt: number,
  schedule: readonly number[],
  random: () => number,
  finishedAt: number,
  url: string,
): AttemptVerdict {
  if (outcome.ok) return { kind: 'delivered' };
  if (outcome.gone) return { kind: 'gone', url };
  const delay = nextAttemptDelay(scheduleAttempt, schedule, random, outcome.retryAfterMs);
  return delay === null ? { kind: 'exhausted' } : { kind: 'retry', nextAttemptAt: finishedAt + delay };
}

/** What the store records of an attempt made under `delivery`'s lease: the partner's answer as text the store can keep. */
export function attemptRecord(delivery: ClaimedDelivery, outcome: AttemptOutcome, startedAt: number, verdict: AttemptVerdict): AttemptRecord {
  return {
    messageId: delivery.message.messageId,
    fencingToken: delivery.fencingToken,
    startedAt,
    durationMs: outcome.durationMs,
    responseStatus: outcome.status,
    responseBody: storableText(outcome.body),
    error: storableText(outcome.error ?? null),
    verdict,
  };
}
