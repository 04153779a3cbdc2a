import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { exitCode, runCli, startCli, stdoutUntil } from './process.js';

describe('appliance-cloud (a real process)', () => {
  it('--help lists the commands', async () => {
    const { code, stdout } = await runCli(['--help']);
    expect(code).toBe(0);
    for (const command of ['sandbox', 'serve', 'migrate', 'admin']) expect(stdout).toMatch(new RegExp(`^\\s+${command}\\b`, 'm'));
  });

  it('serve without ADMIN_TOKEN exits 2 and says why', async () => {
    const { code, stderr } = await runCli(['serve', '--port', '0', '--database-url', 'sqlite::memory:']);
    expect(code).toBe(2);
    expect(stderr).toContain('ADMIN_TOKEN is required by `serve`');
  });

  it('serve on a taken PORT exits 2 and says so', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const { code, stderr } = await runCli(['serve', '--host', '127.0.0.1', '--port', String(port)], { ADMIN_TOKEN: 't', DATABASE_URL: 'sqlite::memory:' });
      expect(code).toBe(2);
      expect(stderr).toContain(`Port ${port} on 127.0.0.1 is already in use`);
    } finally {
      taken.close();
    }
  });

  it('a setting that cannot be used exits 2', async () => {
    const { code, stderr } = await runCli(['serve', '--admin-token', 't', '--region', 'MARS']);
    expect(code).toBe(2);
    expect(stderr).toContain('REGION must be one of KIC, EIC, AIC; got "MARS"');
  });
});

describe('appliance-cloud help (a real process)', () => {
  it('exits 2 for a command line that is not one, as for settings that cannot be used, and 0 for --help', async () => {
    const unknown = await runCli(['serve', '--prot', '8080']);
    expect([unknown.code, unknown.stderr]).toEqual([2, expect.stringMatching(/^error: unknown option '--prot'\n\(Did you mean --port\?\)\n/)]);
    const missing = await runCli(['admin', 'services', 'get']);
    expect([missing.code, missing.stderr]).toEqual([2, expect.stringMatching(/^error: missing required argument 'serviceId'\n/)]);
    expect((await runCli(['admin', 'services', '--help'])).code).toBe(0);
  });

  it('sim act --help lists the actions of each device type', async () => {
    const { code, stdout } = await runCli(['sim', 'act', '--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^ {2}DEVICE_REFRIGERATOR\n {4}.*\bopen-door\b.*$/m);
    // A washer has no door to open, and a ceiling fan only its connection.
    expect(stdout).toMatch(/^ {2}DEVICE_WASHER\n {4}start, pause, stop, raise-error, clear-error, remote-control-on, remote-control-off, go-offline, go-online$/m);
    expect(stdout).toMatch(/^ {2}DEVICE_CEILING_FAN\n {4}go-offline, go-online$/m);
  });

  it.each(['3.1', 'constructor'])('sim devices refuses an MQTT version it does not speak (%s), with 1102', async (version) => {
    const { code, stderr } = await runCli(['sim', 'devices', '--mqtt-url', 'mqtt://127.0.0.1:1', '--devices', '/dev/null', '--mqtt-version', version]);
    expect(code).toBe(1);
    expect(stderr.trim()).toBe(`error 1102: --mqtt-version must be 3.1.1 or 5; got "${version}".`);
  });

  it('sim devices says in one line when its --devices file cannot be read (exit 2) or is not JSON (1000)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'appliance-cloud-devices-'));
    try {
      const missing = join(dir, 'devices.json');
      const absent = await runCli(['sim', 'devices', '--mqtt-url', 'mqtt://127.0.0.1:1', '--devices', missing]);
      expect([absent.code, absent.stderr]).toEqual([2, `appliance-cloud: --devices: cannot read ${missing} (ENOENT); name the file \`sim devices\` printed\n`]);
      writeFileSync(missing, '{"mqttUrl":');
      const malformed = await runCli(['sim', 'devices', '--mqtt-url', 'mqtt://127.0.0.1:1', '--devices', missing]);
      expect([malformed.code, malformed.stderr]).toEqual([1, expect.stringMatching(new RegExp(`^error 1000: --devices ${missing} is not valid JSON: .*\\.\\n$`))]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('sim devices takes as --devices the line it printed, kept in a file as it is (README)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'appliance-cloud-devices-'));
    try {
      const file = join(dir, 'devices.json');
      const printed = { mqttUrl: 'mqtt://127.0.0.1:1', devices: [{ deviceId: 'fan-1', secret: 'fan-1-secret', deviceType: 'DEVICE_CEILING_FAN', modelName: 'CFAN_910604_WW' }] };
      writeFileSync(file, `${JSON.stringify(printed)}\n`);
      // Read and taken: the devices then try the broker, which nothing serves here.
      const { code, stdout, stderr } = await runCli(['sim', 'devices', '--mqtt-url', 'mqtt://127.0.0.1:1', '--devices', file]);
      expect([code, stdout, stderr]).toEqual([2, '', expect.stringMatching(/^appliance-cloud: --mqtt-url mqtt:\/\/127\.0\.0\.1:1: device fan-1 could not connect: /)]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('sim devices refuses a --mqtt-url that is no broker URL before it registers any device', async () => {
    // --url names nothing that answers: the refusal comes before any call to the server.
    const { code, stderr } = await runCli(['sim', 'devices', '--mqtt-url', '127.0.0.1:1883', '--user', 'u1', '--url', 'http://127.0.0.1:1', '--admin-token', 't']);
    expect([code, stderr.trim()]).toEqual([1, 'error 1102: --mqtt-url must be mqtt://, mqtts://, ws:// or wss:// and a host, as in mqtt://127.0.0.1:1883; got "127.0.0.1:1883".']);
  });

  it('sim control refuses a command that is no JSON, or nests deeper than 64 levels, before it calls the server', async () => {
    const deep = `${'{"a":'.repeat(65)}1${'}'.repeat(65)}`;
    for (const [command, problem] of [['{', 'is not valid JSON: '], [deep, 'nests deeper than 64 levels']]) {
      const { code, stderr } = await runCli(['sim', 'control', 'd1', command!, '--url', 'http://127.0.0.1:1', '--admin-token', 't']);
      expect([code, stderr]).toEqual([1, expect.stringContaining(`error 1000: command ${problem}`)]);
    }
  });

  it.each(['0.001', '100000'])('sim devices refuses a --time-scale the simulator does not run at (%s) before it registers any device', async (scale) => {
    const { code, stderr } = await runCli(['sim', 'devices', '--mqtt-url', 'mqtt://127.0.0.1:1', '--user', 'u1', '--url', 'http://127.0.0.1:1', '--admin-token', 't', '--time-scale', scale]);
    expect([code, stderr.trim()]).toEqual([1, `error 1102: --time-scale must be a number from 0.01 to 10000 (1 = real time); got "${scale}".`]);
  });

  it('admin services create describes every option', async () => {
    const { stdout } = await runCli(['admin', 'services', 'create', '--help']);
    const options = [...stdout.matchAll(/^ {2}(--[a-z-]+)(?: <\w+>)?( +\S.*)?$/gm)].map((m) => [m[1], Boolean(m[2])]);
    expect(options).toEqual([['--name', true], ['--allowed-devices', true], ['--callback-url', true], ['--event-callback-url', true], ['--redirect-uris', true]]);
  });
});

describe('appliance-cloud admin (a real process on a SQLite file)', () => {
  let dir: string;
  let env: Record<string, string>;
  const admin = async (...args: string[]) => {
    const result = await runCli(['admin', ...args], env);
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as Record<string, unknown>;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'appliance-cloud-admin-'));
    env = { DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}` };
    const migrated = await runCli(['migrate'], env);
    expect(migrated.code, migrated.stderr).toBe(0);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // One process per step, each building on the one before, as an operator would type them.
  const made: { serviceId?: string; deviceId?: string } = {};

  it('services create prints the id, key and webhook secret', async () => {
    const service = await admin('services', 'create', '--name', 'Partner', '--allowed-devices', 'DEVICE_WASHER,DEVICE_DRYER');
    expect(Object.keys(service).sort()).toEqual(['serviceId', 'serviceKey', 'webhookSecret']);
    expect(service.webhookSecret).toMatch(/^whsec_/);
    made.serviceId = String(service.serviceId);
  });

  it('services create and update refuse in phase OP a callback URL that no delivery could reach, with 1102', async () => {
    const created = await runCli(
      ['admin', 'services', 'create', '--name', 'P', '--allowed-devices', 'DEVICE_WASHER', '--callback-url', 'http://partner.example/hooks'],
      { ...env, PHASE: 'OP' },
    );
    expect([created.code, created.stderr.trim()]).toEqual([
      1,
      'error 1102: callbackUrl "http://partner.example/hooks" cannot receive messages: phase OP accepts only https: callback URLs.',
    ]);
    const updated = await runCli(['admin', 'services', 'update', made.serviceId!, '--event-callback-url', 'https://10.1.2.3/events', '--phase', 'OP'], env);
    expect([updated.code, updated.stderr.trim()]).toEqual([
      1,
      'error 1102: eventCallbackUrl "https://10.1.2.3/events" cannot receive messages: 10.1.2.3 is a private address, refused in phase OP.',
    ]);
    // Phase QA, the admin command's default, takes a receiver on the developer's machine.
    const local = await admin('services', 'update', made.serviceId!, '--callback-url', 'http://127.0.0.1:3000/hooks');
    expect(local).toMatchObject({ callbackUrl: 'http://127.0.0.1:3000/hooks', eventCallbackUrl: null });
  });

  it('services rotate-secret prints a new secret; with --expire-previous-now no other one signs', async () => {
    const rotated = await admin('services', 'rotate-secret', made.serviceId!);
    const retired = await admin('services', 'rotate-secret', made.serviceId!, '--expire-previous-now');
    expect([rotated.webhookSecret, retired.webhookSecret]).toEqual([expect.stringMatching(/^whsec_/), expect.stringMatching(/^whsec_/)]);
    const store = await openStore(env.DATABASE_URL!);
    try {
      expect((await store.getService(made.serviceId!))?.webhookSecrets.map((s) => s.secret)).toEqual([retired.webhookSecret]);
    } finally {
      await store.close();
    }
  });

  it('users create prints the user', async () => {
    expect(await admin('users', 'create', '--country-code', 'KR', '--user-number', 'cli-user')).toEqual({ userNumber: 'cli-user', countryCode: 'KR' });
  });

  it('tokens create prints a token and when it expires', async () => {
    const token = await admin('tokens', 'create', 'cli-user', '--service-id', made.serviceId!);
    expect(token.accessToken).toEqual(expect.any(String));
    expect(Date.parse(String(token.expiresAt))).toBeGreaterThan(Date.now());
  });

  it('devices register prints the device with its secret', async () => {
    const device = await admin('devices', 'register', 'cli-user', '--device-type', 'DEVICE_WASHER', '--alias', 'Washer', '--virtual');
    expect(device).toMatchObject({ deviceType: 'DEVICE_WASHER', alias: 'Washer', virtual: true, online: true });
    expect(device.deviceSecret).toEqual(expect.any(String));
  });

  it('users list and devices list print pages of users and devices', async () => {
    await admin('users', 'create', '--country-code', 'KR', '--user-number', 'cli-user-2');
    expect(await admin('users', 'list', '--limit', '1')).toEqual([{ userNumber: 'cli-user', countryCode: 'KR' }]);
    expect(await admin('users', 'list', '--after', 'cli-user')).toEqual([{ userNumber: 'cli-user-2', countryCode: 'KR' }]);
    const devices = await admin('devices', 'list') as unknown as Record<string, unknown>[];
    expect(devices).toEqual([expect.objectContaining({ deviceType: 'DEVICE_WASHER', alias: 'Washer', userNumbers: ['cli-user'] })]);
    made.deviceId = String(devices[0]!.deviceId);
  }, 90_000);

  it('messages resend prints the message resent, pending, with its attempts', async () => {
    // A service hears of a user's devices once it loaded their list (DESIGN A.8): then a rename is a message.
    const store = await openStore(env.DATABASE_URL!);
    try {
      await store.markDeviceListLoaded(made.serviceId!, 'cli-user', Date.now());
    } finally {
      await store.close();
    }
    await admin('devices', 'rename', made.deviceId!, '--alias', 'Renamed');
    const [message] = await admin('messages', 'list', made.serviceId!) as unknown as { messageId: string }[];
    const resent = await admin('messages', 'resend', message!.messageId);
    expect(resent).toMatchObject({ messageId: message!.messageId, pushType: 'DEVICE_ALIAS_CHANGED', deviceId: made.deviceId, status: 'pending', attempts: [] });
  }, 90_000);

  it('messages list pages with --before, the last messageId of a page; one of no message of the service is refused with 1102', async () => {
    await admin('devices', 'rename', made.deviceId!, '--alias', 'Renamed again');
    const aliases = (page: Record<string, unknown>[]) => page.map((m) => (m.body as { push: { alias: string } }).push.alias);
    const first = await admin('messages', 'list', made.serviceId!, '--limit', '1') as unknown as Record<string, unknown>[];
    const second = await admin('messages', 'list', made.serviceId!, '--limit', '1', '--before', String(first[0]!.messageId)) as unknown as Record<string, unknown>[];
    expect([aliases(first), aliases(second)]).toEqual([['Renamed again'], ['Renamed']]);
    expect(await admin('messages', 'list', made.serviceId!, '--before', String(second[0]!.messageId))).toEqual([]);

    const { code, stdout, stderr } = await runCli(['admin', 'messages', 'list', made.serviceId!, '--before', 'nonsense'], env);
    expect({ code, stdout, stderr: stderr.trim() }).toEqual({
      code: 1,
      stdout: '',
      stderr: `error 1102: before must be the messageId of a message of service ${made.serviceId!}, the last of the previous page; got "nonsense".`,
    });
  }, 90_000);

  it('devices report refuses JSON nested deeper than 64 levels with 1000, as the admin API refuses such a body, and stores nothing', async () => {
    const { version } = await admin('devices', 'get', made.deviceId!);
    const deep = `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`;
    const { code, stdout, stderr } = await runCli(['admin', 'devices', 'report', made.deviceId!, deep], env);
    expect({ code, stdout, stderr: stderr.trim() }).toEqual({ code: 1, stdout: '', stderr: 'error 1000: status nests deeper than 64 levels.' });
    expect((await admin('devices', 'get', made.deviceId!)).version).toBe(version);
  });

  it.each([
    [['services', 'create', '--name', '', '--allowed-devices', 'DEVICE_WASHER'], 'name must not have fewer than 1 characters.'],
    [['devices', 'register', 'cli-user', '--device-type', 'DEVICE_WASHTOWER_WASHER', '--alias', 'Tower', '--group-id', ''], 'groupId must not have fewer than 1 characters.'],
    [['devices', 'rename', '<device>', '--alias', 'x'.repeat(101)], 'alias must not have more than 100 characters.'],
    [['users', 'create', '--country-code', 'KR', '--email', `${'a'.repeat(250)}@x.example`, '--password', 'long enough'], 'email must not have more than 254 characters.'],
  ])('refuses what the admin API refuses, with 1102 and changing nothing: admin %j', async (args, message) => {
    const before = await Promise.all([admin('services', 'list'), admin('users', 'list'), admin('devices', 'list')]);
    const { code, stdout, stderr } = await runCli(['admin', ...args.map((arg) => (arg === '<device>' ? made.deviceId! : arg))], env);
    expect({ code, stdout, stderr: stderr.trim() }).toEqual({ code: 1, stdout: '', stderr: `error 1102: ${message}` });
    expect(await Promise.all([admin('services', 'list'), admin('users', 'list'), admin('devices', 'list')])).toEqual(before);
  }, 60_000);

  it("runs beside a server's settings it does not take, even ones the server would refuse (PORT, LOG_LEVEL, MQTT_URL)", async () => {
    const serverEnv = { ...env, PORT: 'http', LOG_LEVEL: 'verbose', MQTT_URL: 'broker:1883' };
    const listed = await runCli(['admin', 'users', 'list', '--limit', '1'], serverEnv);
    expect([listed.code, listed.stderr, JSON.parse(listed.stdout)]).toEqual([0, '', [{ userNumber: 'cli-user', countryCode: 'KR' }]]);
    const migrated = await runCli(['migrate'], serverEnv);
    expect([migrated.code, migrated.stderr]).toEqual([0, '']);
  });

  it('users create takes its region from --region as from REGION, like the server of the database', async () => {
    const refused = await runCli(['admin', 'users', 'create', '--country-code', 'US'], env);
    expect([refused.code, refused.stderr.trim()]).toEqual([1, expect.stringMatching(/^error 1102: countryCode must be a country of this deployment's region KIC /)]);
    expect(await admin('users', 'create', '--country-code', 'US', '--user-number', 'cli-user-us', '--region', 'AIC')).toEqual({ userNumber: 'cli-user-us', countryCode: 'US' });
  });

  it('prints a refused call as `error <code>: <message>` and exits 1', async () => {
    const { code, stdout, stderr } = await runCli(['admin', 'services', 'get', 'svc_missing'], env);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr.trim()).toBe('error 1305: Service svc_missing does not exist.');
  });

  it('refuses a malformed device id with 1224, as the admin API does', async () => {
    const { code, stderr } = await runCli(['admin', 'devices', 'get', 'bad!id'], env);
    expect([code, stderr.trim()]).toEqual([1, 'error 1224: Device id "bad!id" is malformed: it must be 1 to 128 of A-Z, a-z, 0-9, _ and -.']);
  });
});

describe('admin on the database of a server that ran (real processes on a SQLite file)', () => {
  let dir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'appliance-cloud-deployment-'));
    env = { DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}` };
    const server = startCli(['serve', '--host', '127.0.0.1', '--port', '0'], {
      ...env,
      ADMIN_TOKEN: 't',
      MQTT_PORT: '0',
      LOG_LEVEL: 'info',
      PHASE: 'OP',
      REGION: 'EIC',
      DELIVERY_ALLOW_LIST: '10.1.2.3',
    });
    await stdoutUntil(server, /listening on/);
    server.kill('SIGTERM');
    expect(await exitCode(server)).toBe(0);
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('judges as that server did when not told otherwise: its phase, its allow list and its region', async () => {
    const create = (url: string, ...more: string[]) =>
      runCli(['admin', 'services', 'create', '--name', 'P', '--allowed-devices', 'DEVICE_WASHER', '--callback-url', url, ...more], env);
    const refused = await create('http://127.0.0.1:3000/hooks');
    expect([refused.code, refused.stderr.trim()]).toEqual([
      1,
      'error 1102: callbackUrl "http://127.0.0.1:3000/hooks" cannot receive messages: phase OP accepts only https: callback URLs.',
    ]);
    expect((await create('https://10.1.2.3/hooks')).code).toBe(0);
    // What the command is told wins over what the server recorded.
    expect((await create('http://127.0.0.1:3000/hooks', '--phase', 'QA')).code).toBe(0);

    const korean = await runCli(['admin', 'users', 'create', '--country-code', 'KR'], env);
    expect([korean.code, korean.stderr.trim()]).toEqual([1, expect.stringMatching(/^error 1102: countryCode must be a country of this deployment's region EIC /)]);
    expect((await runCli(['admin', 'users', 'create', '--country-code', 'DE'], env)).code).toBe(0);
  });
});
