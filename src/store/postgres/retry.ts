/**
 * Transactions PostgreSQL aborted because they lost a race (DESIGN J): nothing of them was written,
 * so the store runs them again, a few times, after a short random wait, and the caller never sees it.
 */
import type { RetryReason } from '../store.js';

/** SQLSTATEs of an aborted transaction that may simply run again. */
const RETRYABLE: ReadonlyMap<string, RetryReason> = new Map([
  ['40001', 'serialization'],
  ['40P01', 'deadlock'],
]);

/** Runs of one transaction in all: a race lost five times in a row is no longer bad luck, and the caller hears of it. */
export const MAX_RUNS = 5;

/** Why `error`'s transaction may run again, or undefined when it may not. */
export function retryReason(error: unknown): RetryReason | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? RETRYABLE.get(code) : undefined;
}

/** The wait before retry `retry` (from 1): up to 5 ms × 2^retry at random, so that two losers of one race do not meet again. */
export function retryDelayMs(retry: number, random: () => number): number {
  return random() * 5 * 2 ** retry;
}
