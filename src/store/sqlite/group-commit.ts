/**
 * Group commit: the writes asked for in one turn of the event loop run in ONE transaction, so many
 * device reports share one fsync (synchronous=FULL costs milliseconds per commit). Each work does its
 * writes in one `sql.write`, which nested in the group's transaction is its own savepoint, so one
 * that fails rolls back alone (a second savepoint around it cost ~15 µs per report); every caller is
 * answered only after the commit, so nothing is acknowledged before it is durable.
 */
import type { Sql } from './database.js';

interface Pending {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit {
  readonly #sql: Sql;
  #queue: Pending[] = [];
  #scheduled = false;

  constructor(sql: Sql) {
    this.#sql = sql;
  }

  /** Runs `work` (its writes in one `sql.write`) in the next group; resolves once that group committed. */
  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits what is waiting now (the store calls it before closing). */
  flush(): void {
    this.#scheduled = false;
    if (this.#queue.length === 0) return;
    const batch = this.#queue;
    this.#queue = [];
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      this.#sql.write(() => {
        for (const item of batch) {
          try {
            outcomes.push({ ok: true, value: item.work() });
          } catch (error) {
            outcomes.push({ ok: false, error });
          }
        }
      });
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }
}
