/**
 * A report is acknowledged only once its transaction commits (DESIGN J): when the store fails, the
 * report is not acknowledged, is counted, and comes again until it is stored, on either broker and
 * either database. The failures are real: another process holding SQLite's write lock past the busy
 * timeout, or another PostgreSQL session holding the device's status row past a short lock_timeout.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, postgresAdminUrl, postgresUnreachable } from '../helpers/postgres.js';
import { mosquittoReachable, startCloud, type BrokerKind, type Cloud } from './fixture.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MOSQUITTO_UP = await mosquittoReachable();
const POSTGRES_DOWN = await postgresUnreachable(postgresAdminUrl());

/** A database the cloud's store opens, and a way to make its writes to a device's status fail for a while. */
interface FailingDatabase {
  url: string;
  /** Resolves once writes to the device's status fail; they succeed again `ms` later. */
  holdLock(deviceId: string, ms: number): Promise<void>;
  /** How long to hold it so that a report arriving at once fails at least once. */
  holdMs: number;
  drop(): Promise<void>;
}

/** Past the store's busy timeout (5 s), by another process: SQLite blocks the waiting writer's thread. */
async function sqliteFile(): Promise<FailingDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-store-failure-'));
  const file = join(dir, 'cloud.db');
  const holder = `
    const Database = require('better-sqlite3');
    const db = new Database(process.argv[1]);
    db.exec('BEGIN IMMEDIATE');
    console.log('held');
    setTimeout(() => { db.exec('ROLLBACK'); db.close(); }, Number(process.argv[2]));`;
  return {
    url: `sqlite:${file}`,
    holdMs: 6500,
    async holdLock(_deviceId, ms) {
      const child = spawn(process.execPath, ['-e', holder, file, String(ms)], { cwd: ROOT });
      await new Promise<void>((resolve, reject) => {
        child.stdout.once('data', () => resolve());
        child.once('exit', (code) => reject(new Error(`the lock holder exited ${code}`)));
      });
    },
    async drop() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A session holding the device's status row, and the store's sessions giving up on a lock after 300 ms. */
async function postgresDatabase(): Promise<FailingDatabase> {
  const database = await createTestDatabase(postgresAdminUrl());
  const url = new URL(database.url);
  url.searchParams.set('lock_timeout', '300');
  return {
    url: url.toString(),
    holdMs: 1500,
    async holdLock(deviceId, ms) {
      const session = new pg.Client({ connectionString: database.url });
      await session.connect();
      await session.query('BEGIN');
      await session.query('SELECT 1 FROM device_states WHERE device_id = $1 FOR UPDATE', [deviceId]);
      setTimeout(() => void session.query('ROLLBACK').finally(() => session.end()), ms);
    },
    drop: () => database.drop(),
  };
}

const CASES: { database: string; open: () => Promise<FailingDatabase>; broker: BrokerKind; protocolVersion?: 5; skip: boolean }[] = [
  { database: 'SQLite', open: sqliteFile, broker: 'embedded', skip: false },
  { database: 'SQLite', open: sqliteFile, broker: 'embedded', protocolVersion: 5, skip: false },
  { database: 'SQLite', open: sqliteFile, broker: 'mosquitto', skip: !MOSQUITTO_UP },
  { database: 'PostgreSQL', open: postgresDatabase, broker: 'embedded', skip: POSTGRES_DOWN !== undefined },
  { database: 'PostgreSQL', open: postgresDatabase, broker: 'mosquitto', skip: !MOSQUITTO_UP || POSTGRES_DOWN !== undefined },
];

describe('a report the store fails to write is not acknowledged, and comes again (DESIGN J)', () => {
  let cloud: Cloud | undefined;
  let database: FailingDatabase | undefined;
  afterEach(async () => {
    await cloud?.close();
    await database?.drop();
    [cloud, database] = [undefined, undefined];
  });

  for (const { database: name, open, broker, protocolVersion = 4, skip } of CASES) {
    it.skipIf(skip)(`on ${name} with the ${broker} broker, the device on MQTT ${protocolVersion === 5 ? '5' : '3.1.1'}`, { timeout: 40_000 }, async () => {
      database = await open();
      cloud = await startCloud(broker, { databaseUrl: database.url, protocolVersion });
      const { ctx, world } = cloud;
      const device = await cloud.addDevice();
      const now = Date.now();
      await ctx.store.upsertEventSubscription({ serviceId: world.serviceId, userNumber: world.userNumber, deviceId: device.deviceId, expiresAt: now + 3_600_000 }, now, 100);
      // A persistent session: what the device sent and got no PUBACK for, it sends again when it reconnects.
      const client = await cloud.connect(device, { clean: false, reconnectPeriod: 200 });
      await expect.poll(async () => (await ctx.devices.state(device.deviceId)).online, { timeout: 5000 }).toBe(true);
      const before = await ctx.devices.state(device.deviceId);

      // An MQTT 5 device is told why its connection ends (3.1.1 has the server send no DISCONNECT).
      const disconnects: unknown[] = [];
      client.mqtt.on('disconnect', (packet) => disconnects.push({ reasonCode: packet.reasonCode, reasonString: packet.properties?.reasonString }));

      await database.holdLock(device.deviceId, database.holdMs);
      // Resolves on the PUBACK: with the embedded broker, once the report is stored; with Mosquitto, once Mosquitto has it.
      await client.report({ humidity: { currentHumidity: 62 } });
      const failed = async () => (await cloud!.metrics.reportsFailed.get()).values.find((v) => v.labels.source === 'mqtt')?.value ?? 0;

      await expect.poll(async () => (await ctx.devices.state(device.deviceId)).status, { timeout: 20_000, interval: 100 }).toMatchObject({ humidity: { currentHumidity: 62 } });
      expect(await failed()).toBeGreaterThanOrEqual(1);
      // Stored once, with its one event, however often it came.
      expect((await ctx.devices.state(device.deviceId)).version).toBe(before.version + 1);
      const events = (await ctx.store.listMessages(world.serviceId, { deviceId: device.deviceId })).filter((m) => m.pushType === 'DEVICE_STATUS');
      expect(events.map((m) => JSON.parse(m.body).event.report)).toEqual([{ humidity: { currentHumidity: 62 } }]);
      // And the device is online again, its session back.
      await expect.poll(async () => (await ctx.devices.state(device.deviceId)).online, { timeout: 5000 }).toBe(true);
      if (broker === 'embedded' && protocolVersion === 5) {
        expect(disconnects[0]).toEqual({ reasonCode: 0x80, reasonString: 'the message could not be stored; send it again when connected again' });
      } else expect(disconnects).toEqual([]);
    });
  }
});
