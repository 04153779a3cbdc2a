import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';

const dir = mkdtempSync(join(tmpdir(), 'store-open-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('openStore', () => {
  it('opens SQLite in memory, migrated', async () => {
    const store = await openStore('sqlite::memory:');
    await store.ping();
    expect(await store.listServices()).toEqual([]);
    await store.close();
  });

  it('creates the parent directories of a SQLite file', async () => {
    const file = join(dir, 'nested', 'deeper', 'cloud.db');
    const store = await openStore(`sqlite:${file}`);
    expect(existsSync(file)).toBe(true);
    await store.close();
  });

  it('accepts sqlite:///absolute/path', async () => {
    const file = join(dir, 'triple.db');
    const store = await openStore(`sqlite://${file}`);
    expect(existsSync(file)).toBe(true);
    await store.close();
  });

  it('opens PostgreSQL for postgres:// and postgresql://, rejecting when the server does not answer', async () => {
    // Nothing listens on port 1: migrating fails at once and the store is closed again.
    await expect(openStore('postgres://u:p@127.0.0.1:1/db')).rejects.toThrow(/ECONNREFUSED/);
    await expect(openStore('postgresql://127.0.0.1:1/db')).rejects.toThrow(/ECONNREFUSED/);
  });

  it('refuses anything else, without echoing a password', async () => {
    await expect(openStore('mysql://root:hunter2@localhost/db')).rejects.toThrow(/must start with sqlite: or postgres:\/\/; got "mysql:\/\/\*\*\*@localhost\/db"/);
    await expect(openStore('sqlite:')).rejects.toThrow(/needs a file path/);
  });

  it('rejects after ping once closed', async () => {
    const store = await openStore('sqlite::memory:');
    await store.close();
    await expect(store.ping()).rejects.toThrow();
  });
});
