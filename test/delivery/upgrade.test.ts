/**
 * Migration 002 on an outbox written under 001 (a sandbox from before delivery existed): the first
 * open message of each device queue becomes its head, so nothing recorded earlier is stranded.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, expect, it } from 'vitest';
import { Sql } from '../../src/store/sqlite/database.js';
import { loadMigrations, migrate } from '../../src/store/sqlite/migrate.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';

const dir = mkdtempSync(join(tmpdir(), 'delivery-upgrade-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('makes the first open message of each device queue claimable after the upgrade', async () => {
  const file = join(dir, 'old.db');
  const old = new Sql(new Database(file));
  migrate(old, loadMigrations().filter((m) => m.version === 1), 0);
  old.run("INSERT INTO services (service_id, name, key_hash, allowed_devices, callback_url, created_at) VALUES ('S1', 'S1', 'h', '[]', 'https://S1.example/push', 0)");
  old.run("INSERT INTO webhook_secrets (service_id, secret, created_at) VALUES ('S1', 'whsec_AAAA', 0)");
  const message = (id: string, device: string, sequence: number, status: string) =>
    old.run(
      `INSERT INTO outbox (message_id, service_id, device_id, kind, push_type, sequence, body, status, next_attempt_at, created_at)
       VALUES (?, 'S1', ?, 'push', 'DEVICE_PUSH', ?, '{}', ?, ?, ?)`,
      id, device, sequence, status, sequence, sequence,
    );
  message('a1', 'A', 1, 'delivered');
  message('a2', 'A', 2, 'pending');
  message('a3', 'A', 3, 'pending');
  message('b1', 'B', 1, 'failed');
  message('b2', 'B', 2, 'pending');
  old.db.close();

  const store = openSqliteStore(file);
  await store.migrate();
  const claimed = await store.claimDeliveries({ owner: 'o', now: 100, leaseMs: 1000, limit: 10, perEndpointLimit: 10, inFlight: {} });
  expect(claimed.map((c) => c.message.messageId)).toEqual(['a2', 'b2']);
  await store.close();
});
