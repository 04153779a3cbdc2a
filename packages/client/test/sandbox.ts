/**
 * A real `appliance-cloud sandbox` process for the SDK's tests: a temporary data directory, free
 * ports, its printed world and saved credentials, and the admin API to act as the devices would.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentialsPath, readCredentials, type SandboxCredentials } from '../../../src/sandbox/credentials.js';
import { exitCode, startCli, stdoutUntil } from '../../../test/cli/process.js';
import { ApplianceCloud, type ApplianceCloudOptions } from '@appliance-cloud/client';

export interface Sandbox {
  url: string;
  countryCode: string;
  credentials: SandboxCredentials;
  /** The demo user's login to the OAuth pages, as the banner prints it. */
  owner: { email: string; password: string };
  /** The demo world's devices, one of each type. */
  devices: { deviceType: string; deviceId: string }[];
  deviceOf(deviceType: string): string;
  /** A client for the demo service and user. */
  client(options?: Partial<ApplianceCloudOptions>): ApplianceCloud;
  /** Calls the admin API; rejects on a non-2xx answer. */
  admin(method: string, path: string, body?: unknown): Promise<unknown>;
  stop(): Promise<void>;
}

/** Starts a sandbox with `env` added (e.g. CALLBACK_URL, RATE_LIMIT_PER_SECOND). */
export async function startSandbox(env: Record<string, string> = {}): Promise<Sandbox> {
  const dir = mkdtempSync(join(tmpdir(), 'appliance-cloud-sdk-'));
  const databaseUrl = `sqlite:${join(dir, 'world.db')}`;
  const child = startCli(['sandbox'], { DATABASE_URL: databaseUrl, PORT: '0', SIM_TIME_SCALE: '1', ...env });
  let banner: string;
  try {
    banner = await stdoutUntil(child, /^\s+curl .*\n/m);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const url = /local URL\s+(\S+)/.exec(banner)![1]!;
  const countryCode = /\(country ([A-Z]{2})\)/.exec(banner)![1]!;
  const devices = [...banner.matchAll(/^\s+(DEVICE_[A-Z_]+)\s+(\S+)$/gm)].map((m) => ({ deviceType: m[1]!, deviceId: m[2]! }));
  const credentials = readCredentials(credentialsPath(databaseUrl))!;
  const owner = { email: /^\s+email\s+(\S+)$/m.exec(banner)![1]!, password: /^\s+password\s+(\S+)$/m.exec(banner)![1]! };
  return {
    url,
    countryCode,
    credentials,
    owner,
    devices,
    deviceOf: (deviceType) => devices.find((d) => d.deviceType === deviceType)!.deviceId,
    client: (options = {}) =>
      new ApplianceCloud({
        baseUrl: url,
        serviceId: credentials.serviceId,
        serviceKey: credentials.serviceKey,
        countryCode,
        accessToken: credentials.accessToken,
        ...options,
      } as ApplianceCloudOptions),
    async admin(method, path, body) {
      const response = await fetch(new URL(path, url), {
        method,
        headers: { authorization: `Bearer ${credentials.adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
      return (JSON.parse(text) as { response: unknown }).response;
    },
    async stop() {
      child.kill('SIGTERM');
      await exitCode(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
