/**
 * The connection to one SQLite database: its settings, a cache of prepared statements, and
 * transactions. Everything else in sqlite/ reaches the driver only through `Sql`.
 */
import Database from 'better-sqlite3';
import { refuseNul } from '../storable.js';

/** A value SQLite can bind. */
export type Param = string | number | bigint | null;

/** How long a writer waits for another process's write lock before failing. */
const BUSY_TIMEOUT_MS = 5000;

/** Opens (creating if needed) a database file, or `:memory:`, with the settings the store relies on. */
export function openSqliteDatabase(filename: string): Database.Database {
  const db = new Database(filename);
  try {
    db.pragma('journal_mode = WAL');
    // FULL: a commit the store acknowledged survives a power loss, not only a process crash.
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // 64 MiB of pages (the default is 2 MiB): with 100,000 devices the hot rows stay in memory.
    db.pragma('cache_size = -65536');
    // Statement journals in memory: in a group commit they outgrow the 64 KiB SQLite keeps in memory
    // (each holds the pages its statement changes that the transaction had changed before), and
    // spilling one made a temp file (create, unlink, writes), about once per group.
    db.pragma('temp_store = MEMORY');
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/** Statements prepared once per database on first use, keyed by their text, and write transactions. */
export class Sql {
  readonly db: Database.Database;
  readonly #statements = new Map<string, Database.Statement<Param[]>>();
  readonly #rawStatements = new Map<string, Database.Statement<Param[]>>();
  readonly #transaction: Database.Transaction<(fn: () => unknown) => unknown>;
  /** Inside writeUnguarded: nested writes run as they are. */
  #unguarded = false;
  /** The group of works GroupCommit is running now, else null: they only record (reports, pushes). */
  group: object | null = null;

  constructor(db: Database.Database) {
    this.db = db;
    this.#transaction = db.transaction((fn: () => unknown) => fn());
  }

  /** The first row, or undefined. */
  one<Row>(sql: string, ...params: Param[]): Row | undefined {
    refuseNul(params);
    return this.#statement(sql).get(...params) as Row | undefined;
  }

  all<Row>(sql: string, ...params: Param[]): Row[] {
    refuseNul(params);
    return this.#statement(sql).all(...params) as Row[];
  }

  /** Rows as arrays of their columns, in the statement's order: no object built per row. */
  rows<Row extends unknown[]>(sql: string, ...params: Param[]): Row[] {
    refuseNul(params);
    let statement = this.#rawStatements.get(sql);
    if (!statement) {
      statement = this.db.prepare<Param[]>(sql).raw(true);
      this.#rawStatements.set(sql, statement);
    }
    return statement.all(...params) as Row[];
  }

  /** Runs a statement; returns how many rows it changed. */
  run(sql: string, ...params: Param[]): number {
    refuseNul(params);
    return this.#statement(sql).run(...params).changes;
  }

  /**
   * Runs `fn` in one transaction, taking the write lock at once (a deferred one that reads then
   * writes can fail instead of waiting). Nested calls become savepoints, except inside writeUnguarded.
   */
  write<T>(fn: () => T): T {
    if (this.#unguarded) return fn();
    return this.#transaction.immediate(fn) as T;
  }

  /**
   * Runs `fn` in one transaction whose nested writes take no savepoints of their own: one that
   * throws leaves its writes half done, so the caller must roll the whole transaction back, as
   * throwing out of here does. A savepoint costs two statements and a copy of each page it touches.
   */
  writeUnguarded<T>(fn: () => T): T {
    return this.write(() => {
      const outer = this.#unguarded;
      this.#unguarded = true;
      try {
        return fn();
      } finally {
        this.#unguarded = outer;
      }
    });
  }

  #statement(sql: string): Database.Statement<Param[]> {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.db.prepare<Param[]>(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }
}

/** An area's operations as written here: synchronous, over the database given first. */
type Operations = Record<string, (sql: Sql, ...args: never[]) => unknown>;

/** The operations as the area's methods: the database given, each result (or throw) as a settled promise. */
export type Area<Ops extends Operations> = {
  [K in keyof Ops]: Ops[K] extends (sql: Sql, ...args: infer A) => infer R ? (...args: A) => Promise<R> : never;
};

/** Binds each operation to `sql`: the one place where the store's synchronous work becomes its promises. */
export function area<Ops extends Operations>(sql: Sql, operations: Ops): Area<Ops> {
  const bound: Record<string, (...args: never[]) => Promise<unknown>> = {};
  for (const [name, operation] of Object.entries(operations)) bound[name] = async (...args) => operation(sql, ...args);
  return bound as Area<Ops>;
}
