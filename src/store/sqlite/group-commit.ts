/**
 * Group commit: the writes asked for in one turn of the event loop run in ONE transaction, so many
 * device reports share one fsync (synchronous=FULL costs milliseconds per commit). The works run
 * without savepoints first; only when one throws is the group rolled back and done again with each
 * work in a savepoint of its own (`sql.write` nested), so that it fails alone. Every caller is
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
    let outcomes: Outcome[];
    try {
      outcomes = this.#together(batch) ?? this.#each(batch);
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    } finally {
      this.#sql.group = null;
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }

  /**
   * The common case: every work succeeds, in one transaction without a savepoint each. undefined
   * when one threw: all is rolled back, to be done again by #each.
   */
  #together(batch: Pending[]): Outcome[] | undefined {
    // Each transaction is a group of its own (see keptLookup): another process may commit between
    // this one, rolled back, and #each's.
    this.#sql.group = {};
    try {
      return this.#sql.writeUnguarded(() =>
        batch.map((item): Outcome => {
          try {
            return { ok: true, value: item.work() };
          } catch {
            throw WORK_FAILED;
          }
        }),
      );
    } catch (error) {
      if (error === WORK_FAILED) return undefined;
      throw error;
    }
  }

  /**
   * Each work in its own savepoint (its `sql.write`), so that one that fails rolls back alone. An
   * error that ended the whole transaction (SQLITE_FULL, an I/O error) refuses the whole group: the
   * works after it would each commit on their own, though the group is then refused.
   */
  #each(batch: Pending[]): Outcome[] {
    this.#sql.group = {};
    return this.#sql.write(() =>
      batch.map((item): Outcome => {
        try {
          return { ok: true, value: item.work() };
        } catch (error) {
          if (!this.#sql.db.inTransaction) throw error;
          return { ok: false, error };
        }
      }),
    );
  }
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * A work threw inside #together: what makes it roll back and leave the batch to #each. One for all
 * groups, never seen outside: an Error made per group took its stack each time.
 */
const WORK_FAILED = Symbol('a work of the group failed');
