/** Retention (DESIGN J): delivered and failed messages older than MESSAGE_RETENTION are deleted, a small batch at a time. */
import { setImmediate } from 'node:timers/promises';
import type { OutboxArea } from '../store/areas/outbox.js';
import { parseDuration } from './schedule.js';

/** Messages per statement: each batch holds its locks (with SQLite, the event loop) about as long as a batch of outcomes. */
export const RETENTION_BATCH = 1_000;

/** MESSAGE_RETENTION in milliseconds; throws unless it is a positive duration. */
export function parseRetention(text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined || ms <= 0) throw new Error(`"${text}" is not a duration such as 7d, 12h or 30m (units ms, s, m, h, d)`);
  return ms;
}

/**
 * Deletes the delivered and failed messages created before `before`, batch after batch (see
 * sweepInBatches). Returns how many.
 */
export function sweepOldMessages(store: Pick<OutboxArea, 'deleteOldMessages'>, before: number, batch: number, signal: AbortSignal): Promise<number> {
  return sweepInBatches((limit) => store.deleteOldMessages(before, limit), batch, signal);
}

/**
 * Runs `deleteBatch` batch after batch, letting other work run between them, until a batch comes
 * back short or `signal` aborts (a drain does not wait for a whole backlog). Returns how many it deleted.
 */
export async function sweepInBatches(deleteBatch: (limit: number) => Promise<number>, batch: number, signal: AbortSignal): Promise<number> {
  let deleted = 0;
  for (;;) {
    const n = await deleteBatch(batch);
    deleted += n;
    if (n < batch || signal.aborted) return deleted;
    // SQLite deletes synchronously: without this, a backlog would hold the event loop until it is all gone.
    await setImmediate();
  }
}
