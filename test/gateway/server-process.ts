/**
 * `appliance-cloud serve`, compiled, as a child process with its embedded broker, on a SQLite file of
 * its own, and a world in it built through the admin API: a service, a user with a token, real
 * devices. What a test can ask of it is what anyone outside can: HTTP, MQTT, and its memory in /proc.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { SETTING_NAMES } from '../../src/cli/settings.js';
import { newMessageId } from '../../src/ids.js';
import { exitCode, stdoutUntil } from '../cli/process.js';
import { freePort } from '../helpers/ports.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const ADMIN_TOKEN = 'gateway-process-admin-token';

export interface ProcessDevice {
  deviceId: string;
  secret: string;
}

/** What the admin API says of a device: the part a refusal must leave as it was. */
export interface DeviceSnapshot {
  status: unknown;
  version: number;
  online: boolean;
}

export interface ServerProcess {
  url: string;
  mqttPort: number;
  pid: number;
  serviceId: string;
  /** Calls the admin API; throws on an error envelope. */
  admin(method: string, path: string, body?: unknown): Promise<any>;
  /** Calls the partner API as the world's service and user; the HTTP status and the envelope. */
  partner(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Registers a real device to the world's user, subscribed for pushes and events. */
  addDevice(): Promise<ProcessDevice>;
  snapshot(deviceId: string): Promise<DeviceSnapshot>;
  /** How many messages the world's service has (the outbox, for it). */
  messageCount(): Promise<number>;
  /** The status code of GET /health; 0 when nothing answers. */
  health(): Promise<number>;
  /** The resident memory of the process, in bytes. */
  rss(): number;
  /** A counter of /metrics, summed over its labels. */
  counter(name: string): Promise<number>;
  /** SIGTERM; the exit code. */
  stop(): Promise<number | null>;
}

/** The newest modification time of the files under `dir`. */
function newest(dir: string): number {
  return Math.max(...readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((file) => statSync(join(dir, file)).mtimeMs));
}

/**
 * Starts the compiled CLI as users run it (bin/ runs dist/, which starts in a fraction of the time
 * tsx takes); refuses when src/ changed after the last build, so that no test runs stale code.
 */
function startCompiledCli(args: string[], settings: Record<string, string>): ChildProcessWithoutNullStreams {
  const built = statSync(join(ROOT, 'dist/cli/index.js'), { throwIfNoEntry: false })?.mtimeMs ?? 0;
  if (built < newest(join(ROOT, 'src'))) throw new Error('dist/ is older than src/: run `npm run build` first (this test runs the compiled server)');
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SETTING_NAMES) delete env[name];
  return spawn(process.execPath, [join(ROOT, 'bin/appliance-cloud.js'), ...args], { cwd: ROOT, env: { ...env, ...settings } });
}

export async function startServerProcess(settings: Record<string, string> = {}): Promise<ServerProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'appliance-cloud-gateway-'));
  const mqttPort = await freePort();
  const child = startCompiledCli(['serve'], {
    ADMIN_TOKEN,
    DATABASE_URL: `sqlite:${join(dir, 'cloud.db')}`,
    HOST: '127.0.0.1',
    PORT: '0',
    MQTT_PORT: String(mqttPort),
    LOG_LEVEL: 'info',
    ...settings,
  });
  const log = await stdoutUntil(child, /"listening":"http:\/\/127\.0\.0\.1:\d+"/);
  const url = /"listening":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(log)![1]!;

  const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { ...headers, 'x-message-id': newMessageId(), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const admin = async (method: string, path: string, body?: unknown) => {
    const { body: envelope } = await call(method, `/admin${path}`, { authorization: `Bearer ${ADMIN_TOKEN}` }, body);
    if (envelope.error) throw new Error(`${method} ${path}: ${envelope.error.code} ${envelope.error.message}`);
    return envelope.response;
  };

  const { serviceId, serviceKey } = await admin('POST', '/services', { name: 'gateway hardening', allowedDevices: ['DEVICE_DEHUMIDIFIER'] });
  const { userNumber } = await admin('POST', '/users', { countryCode: 'KR' });
  const { accessToken } = await admin('POST', `/users/${userNumber}/tokens`, { serviceId });
  const partnerHeaders = { authorization: `Bearer ${accessToken}`, 'x-country-code': 'KR', 'x-service-id': serviceId, 'x-service-key': serviceKey };
  const partner = (method: string, path: string, body?: unknown) => call(method, path, partnerHeaders, body);

  return {
    url,
    mqttPort,
    pid: child.pid!,
    serviceId,
    admin,
    partner,
    async addDevice() {
      const { deviceId, deviceSecret } = await admin('POST', `/users/${userNumber}/devices`, { deviceType: 'DEVICE_DEHUMIDIFIER', alias: 'Basement', virtual: false });
      expect((await partner('GET', '/devices')).status).toBe(200);
      expect((await partner('POST', `/push/${deviceId}`)).status).toBe(200);
      expect((await partner('POST', `/event/${deviceId}`)).status).toBe(200);
      return { deviceId, secret: deviceSecret };
    },
    async snapshot(deviceId) {
      const { status, version, online } = await admin('GET', `/devices/${deviceId}`);
      return { status, version, online };
    },
    async messageCount() {
      return ((await admin('GET', `/services/${serviceId}/messages?limit=1000`)) as unknown[]).length;
    },
    async health() {
      return fetch(`${url}/health`).then(
        (res) => res.status,
        () => 0,
      );
    },
    rss() {
      const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      return Number(kb![1]) * 1024;
    },
    async counter(name) {
      const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
      const lines = text.split('\n').filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`));
      return lines.reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const code = await exitCode(child);
      rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
}
