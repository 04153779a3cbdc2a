/**
 * Many nodes for real (DESIGN F): `appliance-cloud serve` processes on one PostgreSQL database, each
 * on its own free port, called over HTTP as a load balancer would; a partner world made through one
 * node's admin API; and the outbox as the admin API lists it.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { newMessageId } from '../../src/ids.js';
import { startCli } from '../cli/process.js';

export const ADMIN_TOKEN = 'cluster-test-admin';
/** Every node gets these: phase QA so that loopback receivers are allowed, no embedded broker, quick retries. */
const NODE_SETTINGS = {
  ADMIN_TOKEN,
  PHASE: 'QA',
  HOST: '127.0.0.1',
  PORT: '0',
  MQTT_PORT: '0',
  LOG_LEVEL: 'info',
  DELIVERY_RETRY_SCHEDULE: Array.from({ length: 30 }, () => '250ms').join(','),
  // The lease is 2 × this + 5 s: a killed node's deliveries go again 7 s later.
  DELIVERY_ATTEMPT_TIMEOUT_MS: '1000',
};
/** A request that gets no answer in this long is a hang. */
const REQUEST_TIMEOUT_MS = 20_000;

export interface Envelope {
  response?: unknown;
  error?: { code: string; message: string };
}

export interface Answer {
  status: number;
  body: Envelope;
}

export interface Partner {
  serviceId: string;
  serviceKey: string;
  accessToken: string;
  countryCode: string;
}

export interface Node {
  name: string;
  url: string;
  child: ChildProcessWithoutNullStreams;
  /** stderr and the last lines of stdout, for a failure message. */
  output(): string;
  admin(method: string, path: string, body?: unknown): Promise<Answer>;
  partner(who: Partner, method: string, path: string, body?: unknown): Promise<Answer>;
  /** Whether the process is still running. */
  alive(): boolean;
  /** SIGTERM, and the exit code once drained. */
  stop(): Promise<number | null>;
  kill(): Promise<void>;
}

/** Starts `serve` on `databaseUrl`; resolves once it listens. */
export async function startNode(name: string, databaseUrl: string, settings: Record<string, string> = {}): Promise<Node> {
  const child = startCli(['serve'], { ...NODE_SETTINGS, DATABASE_URL: databaseUrl, ...settings });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const output = () => `${name} stderr:\n${stderr}\n${name} stdout (end):\n${stdout.slice(-1500)}`;
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      // One line per request at info: only the tail is kept.
      stdout = (stdout + chunk.toString()).slice(-20_000);
      const listening = /"listening":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(stdout)?.[1];
      if (listening) resolve(listening);
    });
    child.on('exit', (code) => reject(new Error(`${name} exited ${code} before listening\n${output()}`)));
  });
  // A call that gets no answer says whether the process died, and what it said last.
  const explain = (error: unknown): never => {
    const state = child.exitCode === null && child.signalCode === null ? 'is running' : `exited (code ${child.exitCode}, signal ${child.signalCode})`;
    throw new Error(`${name} gave no answer (${String(error)}; ${state})\n${output()}`, { cause: error });
  };
  return {
    name,
    url,
    child,
    output,
    admin: (method, path, body) => call(url, method, `/admin${path}`, { authorization: `Bearer ${ADMIN_TOKEN}` }, body).catch(explain),
    partner: (who, method, path, body) => call(url, method, path, partnerHeaders(who), body).catch(explain),
    alive: () => child.exitCode === null && child.signalCode === null,
    async stop() {
      const exit = exited(child);
      child.kill('SIGTERM');
      return exit;
    },
    async kill() {
      const exit = exited(child);
      child.kill('SIGKILL');
      await exit;
    },
  };
}

/** The exit code once the child has exited (null when a signal ended it), at once if it has. */
function exited(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

function partnerHeaders(who: Partner): Record<string, string> {
  return { authorization: `Bearer ${who.accessToken}`, 'x-country-code': who.countryCode, 'x-service-id': who.serviceId, 'x-service-key': who.serviceKey };
}

/** One HTTP call with a fresh x-message-id; rejects if no answer comes within REQUEST_TIMEOUT_MS. */
export async function call(base: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, 'x-message-id': newMessageId(), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Envelope };
}

/** The answer's `response`, as the caller knows it to be, or a failure naming the call. */
export function ok<T = Record<string, unknown>>(answer: Answer, what: string): T {
  if (answer.status !== 200 || answer.body.response === undefined) throw new Error(`${what}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.response as T;
}

export interface ClusterWorld {
  partner: Partner;
  userNumber: string;
  webhookSecret: string;
  /** Ceiling fans of the user, each with an event subscription of the service. */
  deviceIds: string[];
}

/**
 * Through `node`'s admin API: a service calling back `callbackUrl`, a user connected to it, and
 * `devices` real (MQTT) ceiling fans, which no simulator changes behind the test's back; then, as
 * the partner, GET /devices and an event subscription for each fan.
 */
export async function createClusterWorld(node: Node, callbackUrl: string, devices: number): Promise<ClusterWorld> {
  const service = ok(await node.admin('POST', '/services', { name: 'cluster', allowedDevices: ['DEVICE_CEILING_FAN'], callbackUrl }), 'create service');
  const user = ok(await node.admin('POST', '/users', { countryCode: 'KR' }), 'create user');
  const userNumber = String(user.userNumber);
  const deviceIds: string[] = [];
  for (let i = 0; i < devices; i++) {
    const device = ok(await node.admin('POST', `/users/${userNumber}/devices`, { deviceType: 'DEVICE_CEILING_FAN', alias: `Fan ${i}`, virtual: false }), 'register device');
    deviceIds.push(String(device.deviceId));
  }
  const token = ok(await node.admin('POST', `/users/${userNumber}/tokens`, { serviceId: service.serviceId }), 'issue token');
  const partner = { serviceId: String(service.serviceId), serviceKey: String(service.serviceKey), accessToken: String(token.accessToken), countryCode: 'KR' };
  ok(await node.partner(partner, 'GET', '/devices'), 'GET /devices');
  for (const deviceId of deviceIds) ok(await node.partner(partner, 'POST', `/event/${deviceId}`), 'subscribe to events');
  return { partner, userNumber, webhookSecret: String(service.webhookSecret), deviceIds };
}

const STRENGTHS = ['HIGH', 'LOW', 'MID', 'TURBO'];

/** What GET /admin/devices/{id} answers for a ceiling fan, as far as the reports need it. */
interface FanView {
  status?: { airFlow?: { windStrength?: string } };
  version: number;
}

export interface Burst {
  /** Reports answered 200. */
  accepted: number;
  /**
   * The device versions those answers carried, above the version before the burst: each is a change
   * that committed with its message. (A report answered 2000 may have committed too: its change may
   * then make a later report no change, answered with the version it had.)
   */
  changes: Set<number>;
}

/**
 * `count` reports of the device through the node, one after another, each different from the one
 * before it. A node that dies ends the burst.
 */
export async function reportBurst(node: Node, deviceId: string, count: number, offset = 0): Promise<Burst> {
  const burst: Burst = { accepted: 0, changes: new Set() };
  const before = (await node.admin('GET', `/devices/${deviceId}`).catch(() => undefined))?.body.response as FanView | undefined;
  let last = before?.status?.airFlow?.windStrength;
  for (let i = 0; i < count; i++) {
    let windStrength = STRENGTHS[(offset + i) % STRENGTHS.length]!;
    if (windStrength === last) windStrength = STRENGTHS[(offset + i + 1) % STRENGTHS.length]!;
    const answer = await node.admin('POST', `/devices/${deviceId}/report`, { airFlow: { windStrength } }).catch(() => undefined);
    if (answer === undefined) break;
    if (answer.status !== 200) continue;
    burst.accepted++;
    last = windStrength;
    const { version } = answer.body.response as { version: number };
    if (version > (before?.version ?? 0)) burst.changes.add(version);
  }
  return burst;
}

export interface ListedMessage {
  messageId: string;
  deviceId: string;
  status: string;
}

/** Every message of the service (at most 1000), as the admin API lists them through `node`. */
export async function listMessages(node: Node, serviceId: string): Promise<ListedMessage[]> {
  return ok<ListedMessage[]>(await node.admin('GET', `/services/${serviceId}/messages?limit=1000`), 'list messages');
}
