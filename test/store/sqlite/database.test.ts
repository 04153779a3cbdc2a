import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteDatabase, Sql } from '../../../src/store/sqlite/database.js';
import { GroupCommit } from '../../../src/store/sqlite/group-commit.js';
import { loadMigrations, migrate } from '../../../src/store/sqlite/migrate.js';
import { openSqliteStore } from '../../../src/store/sqlite/sqlite-store.js';

const dir = mkdtempSync(join(tmpdir(), 'sqlite-db-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A directory holding these migration files, as a URL (with the trailing slash resolution needs). */
function migrationsDir(name: string, files: Record<string, string>): URL {
  const path = join(dir, name);
  mkdirSync(path, { recursive: true });
  for (const [file, sql] of Object.entries(files)) writeFileSync(join(path, file), sql);
  return pathToFileURL(`${path}/`);
}

describe('openSqliteDatabase', () => {
  it('sets WAL, synchronous FULL, foreign keys, a busy timeout and temp storage in memory', () => {
    const db = openSqliteDatabase(join(dir, 'pragmas.db'));
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(5000);
    expect(db.pragma('temp_store', { simple: true })).toBe(2);
    db.close();
  });
});

describe('Sql', () => {
  it('prepares each statement once and rolls a failed transaction back whole', () => {
    const sql = new Sql(openSqliteDatabase(':memory:'));
    sql.db.exec('CREATE TABLE t (x INTEGER PRIMARY KEY)');
    expect(() =>
      sql.write(() => {
        sql.run('INSERT INTO t (x) VALUES (?)', 1);
        sql.run('INSERT INTO t (x) VALUES (?)', 1);
      }),
    ).toThrow(/UNIQUE/);
    expect(sql.all('SELECT x FROM t')).toEqual([]);
    sql.write(() => sql.run('INSERT INTO t (x) VALUES (?)', 2));
    expect(sql.one<{ x: number }>('SELECT x FROM t WHERE x = ?', 2)).toEqual({ x: 2 });
    expect(sql.one('SELECT x FROM t WHERE x = ?', 3)).toBeUndefined();
    sql.db.close();
  });

  it('nests writes without savepoints inside writeUnguarded, and rolls all of it back when it throws', () => {
    const sql = new Sql(openSqliteDatabase(':memory:'));
    sql.db.exec('CREATE TABLE t (x INTEGER PRIMARY KEY)');
    expect(() =>
      sql.writeUnguarded(() => {
        sql.write(() => sql.run('INSERT INTO t (x) VALUES (?)', 1));
        sql.write(() => {
          sql.run('INSERT INTO t (x) VALUES (?)', 2);
          sql.run('INSERT INTO t (x) VALUES (?)', 2);
        });
      }),
    ).toThrow(/UNIQUE/);
    expect(sql.all('SELECT x FROM t')).toEqual([]);
    // Outside it, a nested write is a savepoint again: a failed one rolls back alone.
    sql.write(() => {
      sql.run('INSERT INTO t (x) VALUES (?)', 3);
      expect(() => sql.write(() => sql.run('INSERT INTO t (x) VALUES (?)', 3))).toThrow(/UNIQUE/);
    });
    expect(sql.all('SELECT x FROM t')).toEqual([{ x: 3 }]);
    sql.db.close();
  });
});

describe('GroupCommit', () => {
  it("commits a turn's works together; one that throws after writing is refused alone, its writes undone", async () => {
    const sql = new Sql(openSqliteDatabase(':memory:'));
    sql.db.exec('CREATE TABLE t (x INTEGER PRIMARY KEY)');
    const group = new GroupCommit(sql);
    const insert = (x: number) => () => sql.write(() => sql.run('INSERT INTO t (x) VALUES (?)', x));
    const results = await Promise.allSettled([
      group.run(insert(1)),
      group.run(() =>
        sql.write(() => {
          sql.run('INSERT INTO t (x) VALUES (?)', 2);
          throw new Error('refused after writing');
        }),
      ),
      group.run(insert(3)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toEqual(new Error('refused after writing'));
    expect(sql.all('SELECT x FROM t ORDER BY x')).toEqual([{ x: 1 }, { x: 3 }]);
    sql.db.close();
  });

  it('refuses the whole group when an error rolled the whole transaction back (disk full): none of it commits', async () => {
    const sql = new Sql(openSqliteDatabase(join(dir, 'full.db')));
    sql.db.exec('CREATE TABLE t (x INTEGER PRIMARY KEY, body TEXT)');
    // The file may grow by two pages: a work writing more meets SQLITE_FULL, which ends the transaction.
    sql.db.pragma(`max_page_count = ${Number(sql.db.pragma('page_count', { simple: true })) + 2}`);
    const group = new GroupCommit(sql);
    const insert = (x: number, body: string) => () => sql.write(() => sql.run('INSERT INTO t (x, body) VALUES (?, ?)', x, body));
    const results = await Promise.allSettled([group.run(insert(1, 'a')), group.run(insert(2, 'x'.repeat(100_000))), group.run(insert(3, 'c'))]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(sql.all('SELECT x FROM t')).toEqual([]);
    sql.db.close();
  });
});

describe('migrations', () => {
  it('012 rebuilds the outbox without the unique sequence index, keeping every row, index and the attempts\' reference', () => {
    const sql = new Sql(openSqliteDatabase(':memory:'));
    const shipped = loadMigrations();
    migrate(sql, shipped.filter((m) => m.version < 12), 0);
    sql.run("INSERT INTO services (service_id, name, key_hash, allowed_devices, created_at) VALUES ('S1', 's', 'h', '[]', 0)");
    const insert = `INSERT INTO outbox (message_id, service_id, device_id, kind, push_type, sequence, body, status, next_attempt_at, created_at, queue_head, attempts)
      VALUES (?, 'S1', 'D1', 'event', 'DEVICE_STATUS', ?, '{}', ?, 0, 0, ?, ?)`;
    sql.run(insert, 'M1', 1, 'delivered', 0, 1);
    sql.run(insert, 'M2', 2, 'held', 1, 0);
    sql.run('INSERT INTO delivery_attempts (message_id, attempt, started_at, duration_ms) VALUES (?, 1, 0, 1)', 'M1');
    const before = sql.all('SELECT * FROM outbox ORDER BY id');

    expect(migrate(sql, shipped.filter((m) => m.version <= 12), 1000)).toEqual([12]);
    expect(sql.all('SELECT * FROM outbox ORDER BY id')).toEqual(before);
    const indexes = sql.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'outbox' ORDER BY name").map((r) => r.name);
    expect(indexes).toEqual([
      'outbox_closed', 'outbox_held', 'outbox_leases', 'outbox_open', 'outbox_pending', 'outbox_ready', 'outbox_service_created', 'sqlite_autoindex_outbox_1',
    ]);
    expect(sql.all('PRAGMA foreign_key_check')).toEqual([]);
    expect(() => sql.run('INSERT INTO delivery_attempts (message_id, attempt, started_at, duration_ms) VALUES (?, 1, 0, 1)', 'unknown')).toThrow(/FOREIGN KEY/);
    expect(() => sql.run(insert, 'M1', 3, 'pending', 0, 0)).toThrow(/UNIQUE constraint failed: outbox.message_id/);
    sql.db.close();
  });

  it('keep their temporary tables in a file, where a copy of a large outbox fits, and statement journals in memory after', () => {
    const url = migrationsDir('temporary', { '001_seen.sql': 'CREATE TABLE seen AS SELECT temp_store FROM pragma_temp_store;' });
    const sql = new Sql(openSqliteDatabase(':memory:'));
    expect(migrate(sql, loadMigrations(url), 1000)).toEqual([1]);
    // 1 is FILE, 2 MEMORY.
    expect(sql.all('SELECT temp_store FROM seen')).toEqual([{ temp_store: 1 }]);
    expect(sql.db.pragma('temp_store', { simple: true })).toBe(2);
    sql.db.close();
  });

  it('015 closes delivered and failed messages in queue_head, leaving open ones as they were', () => {
    const sql = new Sql(openSqliteDatabase(':memory:'));
    const shipped = loadMigrations();
    migrate(sql, shipped.filter((m) => m.version < 15), 0);
    sql.run("INSERT INTO services (service_id, name, key_hash, allowed_devices, created_at) VALUES ('S1', 's', 'h', '[]', 0)");
    const insert = `INSERT INTO outbox (message_id, service_id, device_id, kind, push_type, sequence, body, status, next_attempt_at, created_at, queue_head)
      VALUES (?, 'S1', 'D1', 'event', 'DEVICE_STATUS', ?, '{}', ?, 0, 0, ?)`;
    [['M1', 'delivered', 0], ['M2', 'failed', 0], ['M3', 'held', 1], ['M4', 'held', -1], ['M5', 'pending', 0]].forEach(([id, status, head], i) =>
      sql.run(insert, id as string, i + 1, status as string, head as number),
    );

    expect(migrate(sql, shipped.filter((m) => m.version <= 15), 1000)).toEqual([15]);
    expect(sql.all('SELECT message_id, queue_head FROM outbox ORDER BY id')).toEqual([
      { message_id: 'M1', queue_head: -2 },
      { message_id: 'M2', queue_head: -2 },
      { message_id: 'M3', queue_head: 1 },
      { message_id: 'M4', queue_head: -1 },
      { message_id: 'M5', queue_head: 0 },
    ]);
    const open = "SELECT message_id FROM outbox INDEXED BY outbox_open WHERE service_id = 'S1' AND device_id = 'D1' AND queue_head >= 0 ORDER BY sequence";
    expect(sql.all(open)).toEqual([{ message_id: 'M3' }, { message_id: 'M5' }]);
    sql.db.close();
  });

  it('ship as numbered files, in order, starting with 001_init.sql', () => {
    const shipped = loadMigrations();
    expect(shipped[0]).toMatchObject({ version: 1, name: '001_init.sql' });
    expect(shipped.map((m) => m.version)).toEqual([...shipped.map((m) => m.version)].sort((a, b) => a - b));
  });

  it('apply in version order, each once, recorded in schema_migrations', () => {
    const url = migrationsDir('ordered', {
      '010_second.sql': 'ALTER TABLE a ADD COLUMN y TEXT;',
      '002_first.sql': 'CREATE TABLE a (x INTEGER);',
      'README.md': 'not a migration',
    });
    const sql = new Sql(openSqliteDatabase(':memory:'));
    expect(migrate(sql, loadMigrations(url), 1000)).toEqual([2, 10]);
    expect(migrate(sql, loadMigrations(url), 2000)).toEqual([]);
    expect(sql.all('SELECT version, name, applied_at FROM schema_migrations ORDER BY version')).toEqual([
      { version: 2, name: '002_first.sql', applied_at: 1000 },
      { version: 10, name: '010_second.sql', applied_at: 1000 },
    ]);
    sql.run('INSERT INTO a (x, y) VALUES (?, ?)', 1, 'both columns exist');
    sql.db.close();
  });

  it('apply a failing migration not at all, and record nothing for it', () => {
    const url = migrationsDir('failing', {
      '001_ok.sql': 'CREATE TABLE ok (x INTEGER);',
      '002_bad.sql': 'CREATE TABLE half (x INTEGER); THIS IS NOT SQL;',
    });
    const sql = new Sql(openSqliteDatabase(':memory:'));
    expect(() => migrate(sql, loadMigrations(url), 1000)).toThrow();
    expect(sql.all("SELECT name FROM sqlite_master WHERE name IN ('ok', 'half')")).toEqual([]);
    expect(sql.all('SELECT version FROM schema_migrations')).toEqual([]);
    sql.db.close();
  });

  it('refuse two files with one version', () => {
    const url = migrationsDir('duplicate', { '003_a.sql': 'SELECT 1;', '003_b.sql': 'SELECT 2;' });
    expect(() => loadMigrations(url)).toThrow(/share version 3/);
  });

  it('are idempotent on a store file opened again', async () => {
    const file = join(dir, 'twice.db');
    const first = openSqliteStore(file);
    await first.migrate();
    await first.migrate();
    await first.close();
    const second = openSqliteStore(file);
    await second.migrate();
    await second.close();
    const db = openSqliteDatabase(file);
    expect(db.prepare('SELECT version FROM schema_migrations').all()).toEqual(loadMigrations().map((m) => ({ version: m.version })));
    db.close();
  });
});
