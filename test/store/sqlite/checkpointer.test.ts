/**
 * WAL checkpoints off the event loop: the store's connection never checkpoints, a worker thread
 * copies what was committed into the database file, and the store closes with it.
 */
import Database from 'better-sqlite3';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { startCheckpointer } from '../../../src/store/sqlite/checkpointer.js';
import { openStore } from '../../../src/store/index.js';
import { openSqliteDatabase } from '../../../src/store/sqlite/database.js';
import { addUser } from '../contract/world.js';

const dir = mkdtempSync(join(tmpdir(), 'checkpointer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The users the database file holds on its own, without its WAL: what checkpoints copied into it. */
function usersInFileAlone(file: string): number {
  const copy = `${file}.copy-${Math.random().toString(36).slice(2)}`;
  copyFileSync(file, copy);
  const db = new Database(copy, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM users').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** The frames the WAL holds now: those from its start that carry its header's salt. */
function framesInWal(file: string): number {
  const wal = readFileSync(`${file}-wal`);
  if (wal.length < 32) return 0;
  const pageSize = wal.readUInt32BE(8);
  let frames = 0;
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    if (wal.readUInt32BE(at + 8) !== wal.readUInt32BE(16) || wal.readUInt32BE(at + 12) !== wal.readUInt32BE(20)) break;
    frames += 1;
  }
  return frames;
}

describe('the WAL checkpointer', () => {
  it("copies the store's commits into the database file while the store's own connection never checkpoints", async () => {
    const file = join(dir, 'store.db');
    const store = await openStore(`sqlite:${file}`);
    try {
      for (const user of ['U1', 'U2', 'U3']) await addUser(store, user);
      // Three small commits, far from the thousand frames at which the connection itself would checkpoint.
      await vi.waitFor(() => expect(usersInFileAlone(file)).toBe(3), { timeout: 5000 });
    } finally {
      await store.close();
    }
  });

  it('starts the WAL over while a writer commits turn after turn', async () => {
    const file = join(dir, 'busy.db');
    const db = openSqliteDatabase(file);
    db.pragma('wal_autocheckpoint = 0');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)');
    const insert = db.prepare('INSERT INTO t (body) VALUES (?)');
    const checkpointer = startCheckpointer({ filename: file, intervalMs: 10 }, (message) => {
      throw new Error(message);
    });
    try {
      // Bursts of commits, two pages each, with a timer's turn between bursts, until the WAL is shorter than it was.
      const until = Date.now() + 10_000;
      let last = 0;
      let startedOver = false;
      while (!startedOver && Date.now() < until) {
        for (let i = 0; i < 20; i++) insert.run('x'.repeat(5000));
        const frames = framesInWal(file);
        startedOver = frames < last;
        last = frames;
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      expect(startedOver).toBe(true);
    } finally {
      await checkpointer.stop();
      db.close();
    }
  });
});
