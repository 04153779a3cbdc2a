/**
 * The app under test and a partner world to call it with: a service, a user connected to it by a
 * token, and virtual devices that are online — built through the same domain functions as the admin API.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll } from 'vitest';
import { buildApp } from '../../src/app.js';
import { DEVICE_TYPES } from '../../src/catalog/index.js';
import { loadConfig, type Settings } from '../../src/config.js';
import { createContext, type AppContext, type ContextWithSimulator } from '../../src/context.js';
import type { TryItOut } from '../../src/docs/index.js';
import { newMessageId, systemClock, type Clock } from '../../src/ids.js';
import { demoCountry } from '../../src/regions.js';
import { timerScheduler } from '../../src/sim/scheduler.js';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/store.js';
import { isPostgresUrl, testDatabases } from './postgres.js';

export const ADMIN_TOKEN = 'test-admin-token';

export interface TestApp {
  app: FastifyInstance;
  ctx: ContextWithSimulator;
  /** The credentials /docs presets, as the sandbox sets them. */
  tryItOut: TryItOut;
  close(): Promise<void>;
}

/**
 * A fresh app over a fresh store, admin token `test-admin-token`. The store is `databaseUrl` when
 * given, else `TEST_DATABASE_URL`, else SQLite in memory. When `TEST_DATABASE_URL` is postgres://…,
 * each test file gets a database of its own on that server, created and migrated on first use,
 * emptied for each app, dropped after the file (an app opened while another is still open gets a
 * second one), so tests and parallel test files never see each other's data:
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx vitest run test/api test/admin
 */
export async function testApp(options: { databaseUrl?: string; settings?: Settings; clock?: Clock } = {}): Promise<TestApp> {
  const config = loadConfig('test', { ADMIN_TOKEN, ...options.settings });
  const { store, close } = await testStore(options.databaseUrl);
  const ctx = createContext(config, store, options.clock ?? systemClock, { scheduler: timerScheduler });
  const { server, tryItOut } = await buildApp(ctx);
  await server.ready();
  return {
    app: server,
    ctx,
    tryItOut,
    async close() {
      await server.close();
      await close();
    },
  };
}

export interface TestStore {
  store: Store;
  /** Closes the store and gives its database back. */
  close(): Promise<void>;
}

/**
 * A fresh, migrated store with no data, on the database testApp would use: `databaseUrl` when
 * given, else TEST_DATABASE_URL's (a PostgreSQL database of this file's), else SQLite in memory.
 */
export async function testStore(databaseUrl?: string): Promise<TestStore> {
  const database = await storeDatabase(databaseUrl);
  const store = await openStore(database.url).catch(async (error: unknown) => {
    await database.drop();
    throw error;
  });
  return {
    store,
    async close() {
      await store.close();
      await database.drop();
    },
  };
}

/** The PostgreSQL server of TEST_DATABASE_URL, if that is one; this file's afterAll drops its database. */
const postgres = isPostgresUrl(process.env.TEST_DATABASE_URL)
  ? testDatabases(process.env.TEST_DATABASE_URL, async (url) => (await openStore(url)).close())
  : undefined;
if (postgres) afterAll(() => postgres.dispose());

/** A URL given is used as it is; a PostgreSQL server from the environment gets a new database. */
async function storeDatabase(databaseUrl: string | undefined): Promise<{ url: string; drop(): Promise<void> }> {
  const keep = async () => {};
  if (databaseUrl !== undefined) return { url: databaseUrl, drop: keep };
  if (postgres) return postgres.take();
  return { url: process.env.TEST_DATABASE_URL ?? 'sqlite::memory:', drop: keep };
}

export interface WorldDevice {
  deviceId: string;
  deviceType: string;
}

export interface World {
  serviceId: string;
  serviceKey: string;
  userNumber: string;
  countryCode: string;
  accessToken: string;
  /** The user's devices, oldest first. */
  devices: WorldDevice[];
  /** The mandatory partner headers with a fresh x-message-id, plus `extra`. */
  headers(extra?: Record<string, string>): Record<string, string>;
  /** The same service and user with a new token: connects them again after DELETE /user/service. */
  reconnect(): Promise<World>;
}

export interface WorldOptions {
  /** The service's allowed types; default every type of the catalog. */
  allowedDevices?: string[];
  /** One virtual, online device per type; default every type for a new user, none for an existing one. */
  deviceTypes?: string[];
  /** Connect this existing user instead of creating one. */
  userNumber?: string;
}

/** The five mandatory headers of DESIGN A.2 for the world's service and user, with a fresh message id. */
export function partnerHeaders(world: Pick<World, 'accessToken' | 'countryCode' | 'serviceId' | 'serviceKey'>): Record<string, string> {
  return {
    authorization: `Bearer ${world.accessToken}`,
    'x-country-code': world.countryCode,
    'x-message-id': newMessageId(),
    'x-service-id': world.serviceId,
    'x-service-key': world.serviceKey,
  };
}

/** The admin token header, for calls under /admin. */
export function adminHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${ADMIN_TOKEN}`, ...extra };
}

/** A call under /admin with the admin token and a fresh x-message-id; `payload` is sent as JSON. */
export function callAdmin(app: FastifyInstance, method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: unknown) {
  const headers = adminHeaders({ 'x-message-id': newMessageId() });
  if (payload === undefined) return app.inject({ method, url, headers });
  return app.inject({ method, url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
}

/** A service, a user connected to it, and the user's devices, all made through ctx.accounts and ctx.devices. */
export async function createWorld(ctx: AppContext, options: WorldOptions = {}): Promise<World> {
  const { service, serviceKey } = await ctx.accounts.createService({
    name: 'test service',
    allowedDevices: options.allowedDevices ?? [...DEVICE_TYPES],
  });
  const user = options.userNumber === undefined
    ? await ctx.accounts.createUser(demoCountry(ctx.config.region))
    : await ctx.store.getUser(options.userNumber);
  if (!user) throw new Error(`createWorld: user ${options.userNumber} does not exist`);

  let groupId: string | undefined;
  for (const deviceType of options.deviceTypes ?? (options.userNumber === undefined ? DEVICE_TYPES : [])) {
    const washtower = deviceType.startsWith('DEVICE_WASHTOWER_');
    const { device } = await ctx.devices.register(user.userNumber, {
      deviceType,
      alias: `My ${deviceType.replace('DEVICE_', '').toLowerCase().replaceAll('_', ' ')}`,
      virtual: true,
      // Both washtower halves share one group, as a real washtower does.
      ...(washtower && groupId !== undefined ? { groupId } : {}),
    });
    if (washtower) groupId ??= device.groupId ?? undefined;
  }
  const devices = (await ctx.store.listUserDevices(user.userNumber)).map(({ deviceId, deviceType }) => ({ deviceId, deviceType }));

  const connect = async (): Promise<World> => {
    const { accessToken } = await ctx.accounts.issueToken(user.userNumber, service.serviceId);
    const world: World = {
      serviceId: service.serviceId,
      serviceKey,
      userNumber: user.userNumber,
      countryCode: user.countryCode,
      accessToken,
      devices,
      headers: (extra = {}) => ({ ...partnerHeaders(world), ...extra }),
      reconnect: connect,
    };
    return world;
  };
  return connect();
}
