/**
 * The schema each backend's migrations build, read back from a migrated database: tables, their
 * columns (type, NOT NULL, default, primary key) and indexes, as a snapshot per backend
 * (schema/sqlite.sql, schema/postgres.sql) that a migration changes on purpose, in the same commit.
 * And parity: both databases have the same tables with the same columns, whatever their types.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate as migratePostgres, loadMigrations as postgresMigrations } from '../../src/store/postgres/migrate.js';
import { Sql as PostgresSql } from '../../src/store/postgres/database.js';
import { openPool } from '../../src/store/postgres/pool.js';
import { openSqliteDatabase, Sql as SqliteSql } from '../../src/store/sqlite/database.js';
import { loadMigrations as sqliteMigrations, migrate as migrateSqlite } from '../../src/store/sqlite/migrate.js';
import { createTestDatabase, postgresAdminUrl, postgresUnreachable, withClient, type TestDatabase } from '../helpers/postgres.js';

interface Column {
  name: string;
  type: string;
  notNull: boolean;
  defaultValue: string | null;
}

interface Table {
  name: string;
  columns: Column[];
  primaryKey: string[];
}

interface Schema {
  tables: Table[];
  /** Each index's definition, in the database's own words. */
  indexes: string[];
}

/** Tables only PostgreSQL has, each for a capability SQLite does not offer (store.ts, StoreCapabilities). */
const POSTGRES_ONLY_TABLES = ['rate_limit_buckets'];
/**
 * Columns only PostgreSQL has: each queue's count of open messages and whether it waits for its head,
 * kept under the queue's row so that nodes record and claim together (migrations/003_queue_heads.sql).
 * The delivery algorithms of the two databases differ on purpose.
 */
const POSTGRES_ONLY_COLUMNS: Record<string, string[]> = { message_sequences: ['headless', 'open_messages'] };
/**
 * Tables only SQLite has: the number its triggers move when what recording a message reads changes
 * (sqlite/recording-lookups.ts); PostgreSQL reads it each time, shared by many nodes.
 */
const SQLITE_ONLY_TABLES = ['recording_generation'];

function render(schema: Schema): string {
  const tables = schema.tables.map((table) => {
    const columns = table.columns.map(
      (c) => `  ${c.name} ${c.type}${c.notNull ? ' NOT NULL' : ''}${c.defaultValue === null ? '' : ` DEFAULT ${c.defaultValue}`}`,
    );
    if (table.primaryKey.length > 0) columns.push(`  PRIMARY KEY (${table.primaryKey.join(', ')})`);
    return `CREATE TABLE ${table.name} (\n${columns.join(',\n')}\n);\n`;
  });
  return `${[...tables, ...schema.indexes.map((index) => `${index};\n`)].join('\n')}`;
}

function sqliteSchema(): Schema {
  const sql = new SqliteSql(openSqliteDatabase(':memory:'));
  try {
    migrateSqlite(sql, sqliteMigrations(), 0);
    const names = sql.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name");
    const tables = names.map(({ name }): Table => {
      const info = sql.all<{ name: string; type: string; notnull: number; dflt_value: string | null; pk: number }>(`SELECT * FROM pragma_table_info('${name}') ORDER BY cid`);
      return {
        name,
        columns: info.map((c) => ({ name: c.name, type: c.type, notNull: c.notnull === 1, defaultValue: c.dflt_value })),
        primaryKey: info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name),
      };
    });
    const indexes = sql.all<{ sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name");
    return { tables, indexes: indexes.map((i) => i.sql.replace(/\s+/g, ' ')) };
  } finally {
    sql.db.close();
  }
}

async function postgresSchema(url: string): Promise<Schema> {
  const pool = openPool(url);
  await migratePostgres(PostgresSql.over(pool), postgresMigrations(), 0);
  await pool.end();
  return withClient(url, async (c) => {
    const columns = await c.query<{ table_name: string; column_name: string; data_type: string; is_nullable: string; column_default: string | null }>(
      `SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns
       WHERE table_schema = 'public' ORDER BY table_name COLLATE "C", ordinal_position`,
    );
    const keys = await c.query<{ table_name: string; column_name: string }>(
      `SELECT k.table_name, k.column_name FROM information_schema.table_constraints t
       JOIN information_schema.key_column_usage k ON k.constraint_name = t.constraint_name AND k.table_schema = t.table_schema
       WHERE t.table_schema = 'public' AND t.constraint_type = 'PRIMARY KEY' ORDER BY k.table_name, k.ordinal_position`,
    );
    const indexes = await c.query<{ indexdef: string }>(
      `SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND indexname NOT LIKE '%\\_pkey' ORDER BY indexname COLLATE "C"`,
    );
    const tables = new Map<string, Table>();
    for (const row of columns.rows) {
      const table = tables.get(row.table_name) ?? { name: row.table_name, columns: [], primaryKey: [] };
      tables.set(row.table_name, table);
      table.columns.push({ name: row.column_name, type: row.data_type, notNull: row.is_nullable === 'NO', defaultValue: row.column_default });
    }
    for (const key of keys.rows) tables.get(key.table_name)?.primaryKey.push(key.column_name);
    return { tables: [...tables.values()], indexes: indexes.rows.map((i) => i.indexdef) };
  });
}

/** Each table's column names, sorted, but those left out: what both databases must agree on. */
function shape(schema: Schema, leaveOut: { tables: string[]; columns: Record<string, string[]> } = { tables: [], columns: {} }): Record<string, string[]> {
  const tables = schema.tables.filter((t) => !leaveOut.tables.includes(t.name));
  const kept = (t: Table) => t.columns.map((c) => c.name).filter((name) => !leaveOut.columns[t.name]?.includes(name));
  return Object.fromEntries(tables.map((t) => [t.name, kept(t).sort()]));
}

describe('the SQLite schema', () => {
  it('is the snapshot', async () => {
    await expect(render(sqliteSchema())).toMatchFileSnapshot('schema/sqlite.sql');
  });
});

const adminUrl = postgresAdminUrl();
const unreachable = await postgresUnreachable(adminUrl);

describe.skipIf(unreachable !== undefined)('the PostgreSQL schema', () => {
  let db: TestDatabase;
  let schema: Schema;
  beforeAll(async () => {
    db = await createTestDatabase(adminUrl);
    schema = await postgresSchema(db.url);
  });
  afterAll(() => db?.drop());

  it('is the snapshot', async () => {
    await expect(render(schema)).toMatchFileSnapshot('schema/postgres.sql');
  });

  it('has the tables and columns of the SQLite schema, whatever their types', () => {
    expect(shape(schema, { tables: POSTGRES_ONLY_TABLES, columns: POSTGRES_ONLY_COLUMNS })).toEqual(shape(sqliteSchema(), { tables: SQLITE_ONLY_TABLES, columns: {} }));
    // What is left out is there: a rename on one side is not hidden by the list.
    expect(Object.keys(shape(schema))).toEqual(expect.arrayContaining(POSTGRES_ONLY_TABLES));
    expect(Object.keys(shape(sqliteSchema()))).toEqual(expect.arrayContaining(SQLITE_ONLY_TABLES));
    expect(shape(schema).message_sequences).toEqual(expect.arrayContaining(POSTGRES_ONLY_COLUMNS.message_sequences!));
  });
});
