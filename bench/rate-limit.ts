/**
 * Issue 12, item 8: what the rate limiter costs a status read. Two `serve` processes on one database,
 * limiting off (RATE_LIMIT_PER_SECOND=0) and on (BENCH_RATE_LIMIT, default 20,000 a second, above
 * what one process serves, so that nothing is refused), measured side by side in rounds
 * (bench/lib/compare.ts); with DATABASE_URL=postgres://… on a fresh PostgreSQL database, where the
 * limiter leases its tokens from the shared bucket, with the statements each request costs.
 *
 *   node --import tsx bench/rate-limit.ts
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres BENCH_SECONDS=2 node --import tsx bench/rate-limit.ts
 *
 * A script of its own, not a scenario of `npm run bench`: it prints its figures and writes nothing.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { newMessageId } from '../src/ids.js';
import { buildServer } from './lib/build.js';
import { detailsOf, measure, pairedRatio } from './lib/compare.js';
import { postgresAdminUrl, postgresDatabase, sqliteDatabase, type BenchDatabase } from './lib/database.js';
import { load, type HttpRequest } from './lib/load.js';
import type { BenchSettings } from './lib/scenario.js';
import { ADMIN_TOKEN, startServer, type ServerUnderTest } from './lib/server.js';

const LIMIT = Number(process.env.BENCH_RATE_LIMIT || 20_000);

function positive(name: string, fallback: number): number {
  const value = Number(process.env[name] || fallback);
  if (!(value > 0)) throw new Error(`${name} must be a positive number`);
  return value;
}

const settings: BenchSettings = {
  seconds: positive('BENCH_SECONDS', 3),
  rounds: Math.round(positive('BENCH_ROUNDS', 3)),
  warmupSeconds: positive('BENCH_WARMUP_SECONDS', 2),
  connections: Math.round(positive('BENCH_CONNECTIONS', 50)),
  serverEntry: process.env.BENCH_SERVER_ENTRY || buildServer(),
};

/** A temp SQLite file, or a fresh database on the PostgreSQL server of DATABASE_URL. */
async function database(): Promise<BenchDatabase> {
  const adminUrl = postgresAdminUrl();
  return adminUrl ? postgresDatabase(adminUrl) : sqliteDatabase();
}

/** One call; its `response`, or a failure naming it. */
async function call(base: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, 'x-message-id': newMessageId(), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (JSON.parse(text) as { response: Record<string, unknown> }).response;
}

/**
 * Through the admin API: a service, a user with one ceiling fan, a token; the status read of the fan.
 * A real fan, marked online as its broker session would: a virtual one would be stepped by both
 * servers' simulators, whose writes would count among the statements.
 */
async function seed(server: ServerUnderTest): Promise<HttpRequest> {
  const admin = (method: string, path: string, body?: unknown) => call(server.url, method, `/admin${path}`, { authorization: `Bearer ${ADMIN_TOKEN}` }, body);
  const service = await admin('POST', '/services', { name: 'bench', allowedDevices: ['DEVICE_CEILING_FAN'] });
  const user = await admin('POST', '/users', { countryCode: 'KR' });
  const device = await admin('POST', `/users/${String(user.userNumber)}/devices`, { deviceType: 'DEVICE_CEILING_FAN', alias: 'Fan', virtual: false });
  await admin('POST', `/devices/${String(device.deviceId)}/connection`, { online: true });
  const token = await admin('POST', `/users/${String(user.userNumber)}/tokens`, { serviceId: service.serviceId });
  const headers = {
    authorization: `Bearer ${String(token.accessToken)}`,
    'x-country-code': 'KR',
    'x-message-id': newMessageId(),
    'x-service-id': String(service.serviceId),
    'x-service-key': String(service.serviceKey),
  };
  // The precondition of every device operation (1210).
  await call(server.url, 'GET', '/devices', headers);
  return { method: 'GET', path: `/devices/${String(device.deviceId)}`, headers };
}

/** store_statements_total of /metrics (PostgreSQL only). */
async function statementsOf(server: ServerUnderTest): Promise<number> {
  const metrics = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
  return Number(/^store_statements_total (\d+)$/m.exec(metrics)?.[1] ?? Number.NaN);
}

/**
 * Statements per status read under load, less what the server sends idle in as long (its background
 * loops): the lookups are cached, so what is left is the read and the leases.
 */
async function statementsPerRequest(server: ServerUnderTest, read: HttpRequest): Promise<number> {
  const idleFrom = await statementsOf(server);
  await sleep(settings.seconds * 1000);
  const idle = (await statementsOf(server)) - idleFrom;
  const before = await statementsOf(server);
  const { ok, seconds } = await load({ url: server.url, connections: settings.connections, seconds: settings.seconds, perConnection: [[read]] });
  return ((await statementsOf(server)) - before - (idle * seconds) / settings.seconds) / ok;
}

const db = await database();
const servers: ServerUnderTest[] = [];
try {
  const off = await startServer(settings.serverEntry, '', { DATABASE_URL: db.url, RATE_LIMIT_PER_SECOND: '0' });
  servers.push(off);
  const on = await startServer(settings.serverEntry, '', { DATABASE_URL: db.url, RATE_LIMIT_PER_SECOND: String(LIMIT), RATE_LIMIT_BURST: String(LIMIT) });
  servers.push(on);
  const read = await seed(off);
  const results = await measure([
    { label: 'off', url: off.url, pid: off.pid, perConnection: [[read]] },
    { label: 'on', url: on.url, pid: on.pid, perConnection: [[read]] },
  ], settings);
  const [withOut, withLimit] = [results.off!, results.on!];
  const figures: Record<string, unknown> = {
    database: db.kind,
    limit: `${LIMIT}/s, burst ${LIMIT}`,
    settings: { seconds: settings.seconds, rounds: settings.rounds, connections: settings.connections },
    requestsPerSecond: { off: Math.round(withOut.requestsPerSecond), on: Math.round(withLimit.requestsPerSecond), ratio: pairedRatio(withLimit, withOut, (r) => r.requestsPerSecond) },
    cpuUsPerRequest: { off: withOut.cpuUsPerRequest, on: withLimit.cpuUsPerRequest, addedUs: withLimit.cpuUsPerRequest - withOut.cpuUsPerRequest },
    p99Ms: { off: withOut.p99Ms, on: withLimit.p99Ms },
  };
  if (db.kind === 'PostgreSQL') {
    figures.statementsPerRequest = { off: await statementsPerRequest(off, read), on: await statementsPerRequest(on, read) };
  }
  console.log(JSON.stringify({ ...figures, details: { off: detailsOf(withOut), on: detailsOf(withLimit) } }, null, 2));
} finally {
  for (const server of servers) await server.stop();
  await db.remove();
}
