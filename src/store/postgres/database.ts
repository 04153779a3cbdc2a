/**
 * Queries and transactions over a PostgreSQL pool. Everything else in postgres/ reaches the driver
 * only through `Sql` (and notify.ts through `ListenClient`), and those only through the few calls
 * declared here (STYLE habit 6), which a `pg` Pool and its clients satisfy.
 */

/** A value the store binds: scalars, and arrays for `unnest` and `= ANY`. */
export type Param = string | number | boolean | null | readonly string[] | readonly number[];

/** One query with positional parameters; without parameters, a script of several statements. */
export interface Queryable {
  query(text: string, values?: Param[]): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

export interface PooledClient extends Queryable {
  /** `true` destroys the connection instead of returning it to the pool. */
  release(destroy?: boolean): void;
}

export interface Pool extends Queryable {
  connect(): Promise<PooledClient>;
  end(): Promise<void>;
}

/** A connection of its own that LISTENs: notifications and the connection's loss arrive as events. */
export interface ListenClient {
  connect(): Promise<unknown>;
  query(text: string): Promise<unknown>;
  on(event: 'notification', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  end(): Promise<void>;
}

/** Queries on the pool, or inside one transaction on one client of it. */
export class Sql {
  readonly #db: Queryable;
  /** Undefined inside a transaction. */
  readonly #pool: Pool | undefined;

  private constructor(db: Queryable, pool: Pool | undefined) {
    this.#db = db;
    this.#pool = pool;
  }

  static over(pool: Pool): Sql {
    return new Sql(pool, pool);
  }

  /** The first row, or undefined. */
  async one<Row>(text: string, ...params: Param[]): Promise<Row | undefined> {
    return (await this.all<Row>(text, ...params))[0];
  }

  /** Rows come back in the shape the statement's column aliases give them. */
  async all<Row>(text: string, ...params: Param[]): Promise<Row[]> {
    return (await this.#db.query(text, params)).rows as Row[];
  }

  /** Runs a statement; returns how many rows it changed. */
  async run(text: string, ...params: Param[]): Promise<number> {
    return (await this.#db.query(text, params)).rowCount ?? 0;
  }

  /**
   * Runs `fn` in one transaction on one connection. Inside a transaction already, `fn` joins it: a
   * failure rolls back the whole, as SQLite's nested write() does when its error propagates.
   */
  async transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
    if (!this.#pool) return fn(this);
    const client = await this.#pool.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      const result = await fn(new Sql(client, undefined));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      // A connection that cannot even roll back is not handed to the next caller.
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      throw error;
    } finally {
      client.release(broken);
    }
  }

  async end(): Promise<void> {
    await this.#pool?.end();
  }
}
