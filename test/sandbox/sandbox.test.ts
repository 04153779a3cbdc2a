import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEVICE_TYPES } from '../../src/catalog/index.js';
import { newMessageId } from '../../src/ids.js';
import { exitCode, runCli, startCli, stdoutUntil } from '../cli/process.js';
import { OwnerAgent } from '../helpers/owner-agent.js';

interface Banner {
  localUrl: string;
  baseUrl: string;
  serviceId: string;
  accessToken: string;
  devices: { deviceType: string; deviceId: string }[];
  /** The headers of the printed curl line. */
  curlHeaders: Record<string, string>;
  curlUrl: string;
  text: string;
}

function field(text: string, name: string): string {
  const value = new RegExp(`^\\s+${name}\\s+(\\S+)`, 'm').exec(text)?.[1];
  if (!value) throw new Error(`no ${name} in:\n${text}`);
  return value;
}

/** The banner in what stdout gave: the log's JSON lines, which may come in the same read, left out. */
function parseBanner(output: string): Banner {
  const text = output
    .split('\n')
    .filter((line) => !line.startsWith('{'))
    .join('\n');
  const curl = /^\s+(curl .*)$/m.exec(text)![1]!;
  const quoted = [...curl.matchAll(/'([^']*)'/g)].map((m) => m[1]!);
  const curlHeaders = Object.fromEntries(quoted.slice(1).map((h) => [h.slice(0, h.indexOf(':')), h.slice(h.indexOf(':') + 1).trim()]));
  return {
    localUrl: field(text, 'local URL'),
    baseUrl: field(text, 'stands for'),
    serviceId: field(text, 'serviceId'),
    accessToken: field(text, 'accessToken'),
    devices: [...text.matchAll(/^\s+(DEVICE_[A-Z_]+)\s+(\S+)$/gm)].map((m) => ({ deviceType: m[1]!, deviceId: m[2]! })),
    curlHeaders,
    curlUrl: quoted[0]!,
    text,
  };
}

const BANNER_PRINTED = /^\s+curl .*\n/m;

/** Starts the sandbox, waits for `ready` on stdout, hands the banner to `use`, then stops it with SIGTERM. */
async function withSandbox(env: Record<string, string>, use: (banner: Banner) => Promise<void>, ready = BANNER_PRINTED): Promise<number | null> {
  const child = startCli(['sandbox'], env);
  try {
    await use(parseBanner(await stdoutUntil(child, ready)));
  } finally {
    child.kill('SIGTERM');
  }
  return exitCode(child);
}

async function listDevices(banner: Banner) {
  const res = await fetch(banner.curlUrl, { headers: banner.curlHeaders });
  return { status: res.status, body: (await res.json()) as { response: { deviceId: string; deviceInfo: { deviceType: string } }[] } };
}

describe('appliance-cloud sandbox (a real process)', () => {
  let dir: string;
  let env: Record<string, string>;
  let first: Banner;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'appliance-cloud-sandbox-'));
    env = { DATABASE_URL: `sqlite:${join(dir, 'world.db')}`, PORT: '0', LOG_LEVEL: 'info' };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prints its world, answers GET /devices with every type over HTTP, and drains on SIGTERM', async () => {
    const code = await withSandbox(env, async (banner) => {
      first = banner;
      expect(banner.localUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(banner.baseUrl).toBe('https://kic-qa-ext.appliance-cloud.example');
      expect(banner.text).toContain(`${banner.localUrl}/docs`);
      // The console's one-time link signs in once (DESIGN H).
      const link = field(banner.text, 'console');
      expect(link).toMatch(new RegExp(`^${banner.localUrl}/console/sign-in/[\\w-]+$`));
      const signedIn = await fetch(link, { redirect: 'manual' });
      expect([signedIn.status, signedIn.headers.get('location')]).toEqual([303, '/console']);
      const overview = await fetch(`${banner.localUrl}/console`, { redirect: 'manual', headers: { cookie: signedIn.headers.get('set-cookie')!.split(';')[0]! } });
      expect(overview.status).toBe(200);
      expect((await fetch(link, { redirect: 'manual' })).status).toBe(401);
      for (const name of ['serviceKey', 'userNumber', 'adminToken', 'webhookSecret']) expect(field(banner.text, name)).toBeTruthy();
      expect(banner.devices.map((d) => d.deviceType)).toEqual([...DEVICE_TYPES]);
      expect(Object.keys(banner.curlHeaders).sort()).toEqual(['Authorization', 'x-country-code', 'x-message-id', 'x-service-id', 'x-service-key']);
      expect(banner.curlHeaders['x-message-id']).toMatch(/^[A-Za-z0-9_-]{22}$/);

      const { status, body } = await listDevices(banner);
      expect(status).toBe(200);
      expect(body.response).toHaveLength(14);
      expect(body.response.map((d) => d.deviceId).sort()).toEqual(banner.devices.map((d) => d.deviceId).sort());
    }, /"baseUrl":"https:\/\/kic-qa-ext\.appliance-cloud\.example"/); // the JSON log line of the start names the base URL too
    expect(code).toBe(0);
    const file = join(dir, 'sandbox.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ serviceId: first.serviceId, accessToken: first.accessToken });
  });

  it('prints the demo owner and two commands that link it to the service with the device flow', async () => {
    const code = await withSandbox(env, async (banner) => {
      const [ask, fetchTokens] = [...banner.text.matchAll(/^\s+(curl -s -u .*)$/gm)].map((m) => m[1]!);
      const shell = async (line: string) => JSON.parse((await promisify(execFile)('sh', ['-c', line])).stdout) as Record<string, string>;
      const started = await shell(ask!);
      expect(field(banner.text, 'authorize')).toBe(`${banner.localUrl}/oauth/authorize`);

      const agent = new OwnerAgent(banner.localUrl);
      const entry = await agent.follow('/device');
      const confirm = await agent.submit(entry, /\/oauth\/device$/, { user_code: started.user_code! });
      const signIn = await agent.submit(confirm, /\/oauth\/device$/, {}, { confirm: 'yes' });
      const consent = await agent.submit(signIn, /\/login$/, { email: field(banner.text, 'email'), password: field(banner.text, 'password') });
      expect((await agent.submit(consent, /\/consent$/, { share: 'all' })).html).toContain('is linked to your appliances');

      const tokens = await shell(fetchTokens!.replace('DEVICE_CODE', started.device_code!));
      expect(tokens.token_type).toBe('Bearer');
      expect(tokens.scope!.split(' ').sort()).toEqual(['control', 'devices', 'events', 'push']);
      const { status, body } = await listDevices({ ...banner, curlHeaders: { ...banner.curlHeaders, Authorization: `Bearer ${tokens.access_token}` } });
      expect(status).toBe(200);
      expect(body.response).toHaveLength(DEVICE_TYPES.length);
    }, /oauth\/token\n/);
    expect(code).toBe(0);
  }, 60_000);

  it('keeps the same world when run again, renewing a token it cannot reuse, and says so when PORT is taken', async () => {
    const file = join(dir, 'sandbox.json');
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), accessToken: 'revoked-or-unknown' }));
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const code = await withSandbox({ ...env, PORT: String(port) }, async (banner) => {
        expect(banner.text).toContain(`PORT ${port} is taken`);
        expect(banner.localUrl).not.toBe(`http://127.0.0.1:${port}`);
        expect(banner.serviceId).toBe(first.serviceId);
        expect(banner.devices).toEqual(first.devices);
        expect(banner.accessToken).not.toBe('revoked-or-unknown');
        expect((await listDevices(banner)).body.response).toHaveLength(14);
        // sim finds the port the sandbox fell back to in its data directory, with the PORT it was asked for still set.
        const sim = await runCli(['sim', 'time-scale', '10'], { DATABASE_URL: env.DATABASE_URL!, PORT: String(port) });
        expect([sim.code, sim.stderr, JSON.parse(sim.stdout || 'null')]).toEqual([0, '', { scale: 10 }]);
      });
      expect(code).toBe(0);
    } finally {
      taken.close();
    }
  });

  it('listening on every address (HOST=0.0.0.0, as in a container), prints the loopback, which a browser or a Windows client can open', async () => {
    const code = await withSandbox({ ...env, HOST: '0.0.0.0' }, async (banner) => {
      expect(banner.localUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(banner.curlUrl).toBe(`${banner.localUrl}/devices`);
      expect(field(banner.text, 'console')).toMatch(new RegExp(`^${banner.localUrl}/console/sign-in/`));
      expect(banner.text).not.toContain('0.0.0.0');
      expect((await listDevices(banner)).status).toBe(200);
      expect(JSON.parse(readFileSync(join(dir, 'sandbox.json'), 'utf8')).localUrl).toBe(banner.localUrl);
    });
    expect(code).toBe(0);
  });

  it('is driven from the command line: sim act opens the refrigerator door of the running sandbox, sim control sets the fan', async () => {
    const code = await withSandbox(env, async (banner) => {
      const fridge = banner.devices.find((d) => d.deviceType === 'DEVICE_REFRIGERATOR')!.deviceId;
      const act = await runCli(['sim', 'act', fridge, 'open-door', '--url', banner.localUrl], { DATABASE_URL: env.DATABASE_URL! });
      expect(act.code, act.stderr).toBe(0);
      expect(JSON.parse(act.stdout).doorStatus[0].doorState).toBe('OPEN');

      await listDevices(banner);
      const status = await fetch(`${banner.localUrl}/devices/${fridge}`, { headers: { ...banner.curlHeaders, 'x-message-id': newMessageId() } });
      expect(((await status.json()) as { response: { doorStatus: { doorState: string }[] } }).response.doorStatus[0]!.doorState).toBe('OPEN');

      const unknown = await runCli(['sim', 'act', fridge, 'fly', '--url', banner.localUrl], { DATABASE_URL: env.DATABASE_URL! });
      expect([unknown.code, unknown.stderr]).toEqual([1, expect.stringMatching(/^error 1102: /)]);

      const fan = banner.devices.find((d) => d.deviceType === 'DEVICE_CEILING_FAN')!.deviceId;
      const control = await runCli(['sim', 'control', fan, '{"airFlow":{"windStrength":"LOW"}}', '--url', banner.localUrl], { DATABASE_URL: env.DATABASE_URL! });
      expect(control.code, control.stderr).toBe(0);
      expect(JSON.parse(control.stdout)).toMatchObject({ status: { airFlow: { windStrength: 'LOW' } }, version: expect.any(Number) });
      const scale = await runCli(['sim', 'time-scale', '--url', banner.localUrl], { DATABASE_URL: env.DATABASE_URL! });
      expect([scale.code, JSON.parse(scale.stdout || 'null')]).toEqual([0, { scale: 10 }]);
    });
    expect(code).toBe(0);
  }, 90_000);
});
