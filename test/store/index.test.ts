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

  it('says PostgreSQL is not there yet', async () => {
    await expect(openStore('postgres://u:p@localhost/db')).rejects.toThrow(/PostgreSQL support arrives with issue 6/);
    await expect(openStore('postgresql://localhost/db')).rejects.toThrow(/issue 6/);
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
