/** What the store-only benchmarks record for a claimed delivery: its attempt, answered 200 at once. */
import type { AttemptRecord, ClaimedDelivery } from '../../src/store/areas/delivery.js';

export function deliveredAttempt(delivery: ClaimedDelivery, startedAt: number): AttemptRecord {
  return {
    messageId: delivery.message.messageId,
    fencingToken: delivery.fencingToken,
    startedAt,
    durationMs: 1,
    responseStatus: 200,
    responseBody: '',
    error: null,
    verdict: { kind: 'delivered' },
  };
}
