/**
 * Queries and transactions over a PostgreSQL pool. Everything else in postgres/ reaches the driver
 * only through `Sql` (and notify.ts through `ListenClient`), and those only through the few calls
 * declared here (STYLE habit 6), which a `pg` Pool and its clients satisfy.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RetryReason } from '../store.js';
import { refuseNul } from '../storable.js';
import { MAX_RUNS, retryDelayMs, retryReason } from './retry.js';

/** A value the store binds: scalars, and arrays for `unnest` and `= ANY`. */
export type Param = string | number | boolean | null | readonly (string | null)[] | readonly (number | null)[];

/**
 * One query with positional parameters, prepared under `name` on each connection the first time it
 * is sent there; without parameters, a script of several statements.
 */
export interface Queryable {
  query(query: { text: string; values?: Param[]; name?: string }): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

export interface PooledClient extends Queryable {
  /** `true` destroys the connection instead of returning it to the pool. */
  release(destroy?: boolean): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
  off(event: 'error', listener: (error: Error) => void): unknown;
}

export interface Pool extends Queryable {
  connect(): Promise<PooledClient>;
  end(): Promise<void>;
}

/** A connection of its own that LISTENs: notifications and the connection's loss arrive as events. */
export interface ListenClient {
  connect(): Promise<unknown>;
  query(text: string): Promise<unknown>;
  on(event: 'notification', listener: (notification: { channel: string; payload?: string }) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  end(): Promise<void>;
}

/**
 * Names of the statements prepared so far, by text. Preparing saves PostgreSQL from planning the
 * store's larger statements (claims, outcomes) on every call. The texts are the store's own, a
 * bounded set, so this never grows past a few hundred entries.
 */
const preparedNames = new Map<string, string>();

function preparedName(text: string): string {
  let name = preparedNames.get(text);
  if (name === undefined) {
    name = `appliance_cloud_${preparedNames.size + 1}`;
    preparedNames.set(text, name);
  }
  return name;
}

/** What a pool's Sql and those of its transactions count together. */
interface Counts {
  sent: number;
  retried: Record<RetryReason, number>;
}

/**
 * Queries on the pool, or inside one transaction on one client of it. A transaction, or a statement
 * on its own (its own transaction), that PostgreSQL aborts for a serialization failure or a deadlock
 * runs again as a whole (retry.ts); a statement inside a transaction is not retried alone.
 */
export class Sql {
  readonly #db: Queryable;
  /** Undefined inside a transaction. */
  readonly #pool: Pool | undefined;
  readonly #counts: Counts;

  private constructor(db: Queryable, pool: Pool | undefined, counts: Counts) {
    this.#db = db;
    this.#pool = pool;
    this.#counts = counts;
  }

  static over(pool: Pool): Sql {
    return new Sql(pool, pool, { sent: 0, retried: { serialization: 0, deadlock: 0 } });
  }

  /** Every statement sent through this Sql or its transactions, BEGIN, COMMIT and ROLLBACK included. */
  get statementsSent(): number {
    return this.#counts.sent;
  }

  /** Transactions (and statements on their own) run again, by why PostgreSQL aborted them. */
  get transactionsRetried(): Readonly<Record<RetryReason, number>> {
    return { ...this.#counts.retried };
  }

  /** The first row, or undefined. */
  async one<Row>(text: string, ...params: Param[]): Promise<Row | undefined> {
    return (await this.all<Row>(text, ...params))[0];
  }

  /** Rows come back in the shape the statement's column aliases give them. */
  async all<Row>(text: string, ...params: Param[]): Promise<Row[]> {
    return (await this.#statement(text, params)).rows as Row[];
  }

  /** Runs a statement; returns how many rows it changed. */
  async run(text: string, ...params: Param[]): Promise<number> {
    return (await this.#statement(text, params)).rowCount ?? 0;
  }

  /**
   * Runs `fn` in one transaction on one connection. Inside a transaction already, `fn` joins it: a
   * failure rolls back the whole, as SQLite's nested write() does when its error propagates.
   */
  async transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
    const pool = this.#pool;
    if (!pool) return fn(this);
    return this.#retried(() => this.#transactionOnce(pool, fn));
  }

  async #transactionOnce<T>(pool: Pool, fn: (tx: Sql) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    let broken = false;
    // Checked out, the connection's loss (PostgreSQL restarting) is ours to hear: unheard, it would end the process.
    const lost = () => {
      broken = true;
    };
    client.on('error', lost);
    try {
      await this.#send(client, 'BEGIN');
      const result = await fn(new Sql(client, undefined, this.#counts));
      await this.#send(client, 'COMMIT');
      return result;
    } catch (error) {
      // A connection that cannot even roll back is not handed to the next caller.
      await this.#send(client, 'ROLLBACK').catch(() => {
        broken = true;
      });
      throw error;
    } finally {
      client.off('error', lost);
      client.release(broken);
    }
  }

  async end(): Promise<void> {
    await this.#pool?.end();
  }

  /** On the pool a statement is its own transaction, retried as one; inside a transaction, the transaction is. */
  #statement(text: string, params: Param[]): ReturnType<Queryable['query']> {
    if (!this.#pool) return this.#send(this.#db, text, params);
    return this.#retried(() => this.#send(this.#db, text, params));
  }

  /** Runs `attempt` again while PostgreSQL aborts it for a race it lost, up to MAX_RUNS runs in all. */
  async #retried<T>(attempt: () => Promise<T>): Promise<T> {
    for (let run = 1; ; run++) {
      try {
        return await attempt();
      } catch (error) {
        const reason = retryReason(error);
        if (reason === undefined || run === MAX_RUNS) throw error;
        this.#counts.retried[reason] += 1;
        await sleep(retryDelayMs(run, Math.random));
      }
    }
  }

  #send(db: Queryable, text: string, values: Param[] = []): ReturnType<Queryable['query']> {
    refuseNul(values);
    this.#counts.sent += 1;
    // A script of several statements (a migration) cannot be prepared; nothing else goes without parameters.
    return db.query(values.length > 0 ? { text, values, name: preparedName(text) } : { text });
  }
}

/** An area's operations as written here: over the pool (or a transaction) given first. */
type Operations = Record<string, (sql: Sql, ...args: never[]) => Promise<unknown>>;

/** The operations as the area's methods, over the pool. */
export type Area<Ops extends Operations> = {
  [K in keyof Ops]: Ops[K] extends (sql: Sql, ...args: infer A) => infer R ? (...args: A) => R : never;
};

/** Binds each operation to `sql`; a bound function adds no promise or call of its own. */
export function area<Ops extends Operations>(sql: Sql, operations: Ops): Area<Ops> {
  const bound: Record<string, unknown> = {};
  for (const [name, operation] of Object.entries(operations)) bound[name] = operation.bind(undefined, sql);
  return bound as Area<Ops>;
}
