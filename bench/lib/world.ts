/**
 * Worlds to benchmark, seeded on a temp SQLite file through the domain functions the admin API uses
 * (ctx.accounts, ctx.devices), then prepared over HTTP as a partner would (GET /devices, POST /event).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEVICE_TYPES } from '../../src/catalog/index.js';
import { loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';
import { newMessageId, systemClock } from '../../src/ids.js';
import { demoCountry } from '../../src/regions.js';
import { openSqliteDatabase } from '../../src/store/sqlite/database.js';
import { sqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { HttpRequest } from './load.js';
import { ADMIN_TOKEN } from './server.js';

export interface WorldSpec {
  services: number;
  /** User k is connected (has a token) to service k mod `services`. */
  users: number;
  /** Per user; device j has type `deviceTypes[j mod length]`. */
  devicesPerUser: number;
  deviceTypes: readonly string[];
  /** Virtual appliances (online at once, the simulator answers control) or real ones marked online. */
  virtual: boolean;
  /** How many users, spread evenly over the world, the benchmark calls as. */
  identities: number;
}

/** A user as a calling service sees it: the credentials to call with and the device ids. */
export interface Identity {
  serviceId: string;
  userNumber: string;
  /** The five mandatory headers of DESIGN A.2 (one fixed, valid x-message-id). */
  headers: Record<string, string>;
  deviceIds: string[];
}

export interface World {
  directory: string;
  databaseFile: string;
  identities: Identity[];
  /** Seconds the seeding took. */
  seedSeconds: number;
  remove(): void;
}

/** The twelve types that are one appliance each (the washtower's two halves are left out). */
export const TWELVE_TYPES = DEVICE_TYPES.filter((type) => !type.startsWith('DEVICE_WASHTOWER_')).slice(0, 12);

/** Seeds a world on a fresh file in a temp directory. */
export async function seedWorld(spec: WorldSpec): Promise<World> {
  const started = performance.now();
  const directory = mkdtempSync(join(tmpdir(), 'appliance-cloud-bench-'));
  const databaseFile = join(directory, 'world.db');
  const db = openSqliteDatabase(databaseFile);
  // Seeding only: the server reopens the file with the store's own settings (synchronous = FULL).
  db.pragma('synchronous = OFF');
  const store = sqliteStore(db);
  await store.migrate();
  const config = loadConfig('serve', { ADMIN_TOKEN });
  const ctx = createContext(config, store, systemClock);
  const countryCode = demoCountry(config.region);

  const services: { serviceId: string; serviceKey: string }[] = [];
  for (let s = 0; s < spec.services; s += 1) {
    const { service, serviceKey } = await ctx.accounts.createService({ name: `bench service ${s}`, allowedDevices: [...DEVICE_TYPES] });
    services.push({ serviceId: service.serviceId, serviceKey });
  }
  const step = Math.max(1, Math.floor(spec.users / spec.identities));
  const identities: Identity[] = [];
  for (let u = 0; u < spec.users; u += 1) {
    const user = await ctx.accounts.createUser(countryCode);
    const deviceIds: string[] = [];
    for (let d = 0; d < spec.devicesPerUser; d += 1) {
      const deviceType = spec.deviceTypes[d % spec.deviceTypes.length]!;
      const { device } = await ctx.devices.register(user.userNumber, { deviceType, alias: `${deviceType} ${d}`, virtual: spec.virtual });
      // A real device is online once it connects; here, as if it had (the gateway's own call).
      if (!spec.virtual) await ctx.devices.setConnection(device.deviceId, true);
      deviceIds.push(device.deviceId);
    }
    const service = services[u % services.length]!;
    const { accessToken } = await ctx.accounts.issueToken(user.userNumber, service.serviceId);
    if (u % step === 0 && identities.length < spec.identities) {
      identities.push({
        serviceId: service.serviceId,
        userNumber: user.userNumber,
        headers: {
          authorization: `Bearer ${accessToken}`,
          'x-country-code': countryCode,
          'x-message-id': newMessageId(),
          'x-service-id': service.serviceId,
          'x-service-key': service.serviceKey,
        },
        deviceIds,
      });
    }
  }
  await store.close();
  return {
    directory,
    databaseFile,
    identities,
    seedSeconds: (performance.now() - started) / 1000,
    remove: () => rmSync(directory, { recursive: true, force: true }),
  };
}

/** GET /devices for a user: also the precondition of every device operation (1210). */
export function listRequest(identity: Identity): HttpRequest {
  return { method: 'GET', path: '/devices', headers: identity.headers };
}

export function statusRequest(identity: Identity, deviceId: string): HttpRequest {
  return { method: 'GET', path: `/devices/${deviceId}`, headers: identity.headers };
}

export function controlRequest(identity: Identity, deviceId: string, command: unknown): HttpRequest {
  return {
    method: 'POST',
    path: `/devices/${deviceId}`,
    headers: { ...identity.headers, 'content-type': 'application/json' },
    body: JSON.stringify(command),
  };
}

/** Sends one request and throws unless it answers 200. */
async function call(url: string, request: HttpRequest): Promise<unknown> {
  const response = await fetch(`${url}${request.path}`, { method: request.method, headers: request.headers, body: request.body ?? null });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${request.method} ${request.path} answered ${response.status}: ${text}`);
  return JSON.parse(text) as unknown;
}

/** Loads each identity's device list, and subscribes it to its devices' events when asked. */
export async function prepareIdentities(url: string, identities: Identity[], options: { subscribeEvents?: boolean } = {}): Promise<void> {
  for (const identity of identities) {
    await call(url, listRequest(identity));
    if (!options.subscribeEvents) continue;
    for (const deviceId of identity.deviceIds) {
      await call(url, { method: 'POST', path: `/event/${deviceId}`, headers: { ...identity.headers, 'content-type': 'application/json' }, body: '{"expire":{"unit":"DAY","timer":1}}' });
    }
  }
}
