/**
 * Configuration mistakes (issue 19 item 5), each made as a user would in a real process: one line on
 * stderr naming the setting and what it allows, exit code 2, no stack trace, nothing started.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAdminUrl, postgresUnreachable } from '../helpers/postgres.js';
import { runCli } from './process.js';

/** A loopback port nothing listens on: one the system just gave out and took back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The whole of stderr is this one line, and the exit code is 2. */
async function refused(args: string[], env: Record<string, string>, line: string): Promise<void> {
  const { code, stdout, stderr } = await runCli(args, env);
  expect({ code, stdout, stderr }).toEqual({ code: 2, stdout: '', stderr: `appliance-cloud: ${line}\n` });
}

describe('configuration mistakes (real processes)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'appliance-cloud-config-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a DATABASE_URL of another database', async () => {
    await refused(['serve', '--port', '0'], { ADMIN_TOKEN: 't', DATABASE_URL: 'mysql://root:hunter2@db/app' },
      'DATABASE_URL must be sqlite:<file>, sqlite::memory: or postgres://user:pass@host:5432/db; got "mysql://***@db/app"');
  });

  it('a PostgreSQL nobody answers at', async () => {
    const port = await closedPort();
    await refused(['serve', '--port', '0'], { ADMIN_TOKEN: 't', DATABASE_URL: `postgres://app:secret@127.0.0.1:${port}/app` },
      `DATABASE_URL: no PostgreSQL answers at 127.0.0.1:${port} (ECONNREFUSED); start it, or set DATABASE_URL to a reachable postgres://… or to sqlite:<file>`);
  });

  it('an MQTT_URL nobody answers at', async () => {
    const port = await closedPort();
    await refused(['serve', '--port', '0'], { ADMIN_TOKEN: 't', DATABASE_URL: 'sqlite::memory:', MQTT_URL: `mqtt://app:secret@127.0.0.1:${port}` },
      `MQTT_URL: MQTT broker mqtt://127.0.0.1:${port} refused the connection: connect ECONNREFUSED 127.0.0.1:${port}; start the broker, check the URL's host, port and credentials, or unset MQTT_URL for the embedded broker`);
    await refused(['serve', '--port', '0'], { ADMIN_TOKEN: 't', DATABASE_URL: 'sqlite::memory:', MQTT_URL: `127.0.0.1:${port}` },
      `MQTT_URL must be mqtt://, mqtts://, ws:// or wss:// and a host, as in mqtt://user:pass@broker:1883; got "127.0.0.1:${port}"`);
  });

  it('a HOST that is no address of this machine', async () => {
    await refused(['serve', '--port', '0', '--mqtt-port', '0'], { ADMIN_TOKEN: 't', DATABASE_URL: 'sqlite::memory:', HOST: 'no-such-host.invalid' },
      'HOST: cannot listen on "no-such-host.invalid" (ENOTFOUND); name an address of this machine, such as 127.0.0.1, 0.0.0.0 or ::');
    // The embedded broker listens first, on the same HOST.
    await refused(['serve', '--port', '0', '--mqtt-port', String(await closedPort())], { ADMIN_TOKEN: 't', DATABASE_URL: 'sqlite::memory:', HOST: '203.0.113.7' },
      'HOST: cannot listen on "203.0.113.7" (EADDRNOTAVAIL); name an address of this machine, such as 127.0.0.1, 0.0.0.0 or ::');
  });

  it('--log-level verbose', async () => {
    await refused(['sandbox', '--log-level', 'verbose', '--port', '0'], { DATABASE_URL: `sqlite:${join(dir, 'sandbox.db')}` },
      'LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent; got "verbose"');
  });

  it('a setting that only delivery reads is checked before anything starts too', async () => {
    await refused(['serve', '--port', '0'], { ADMIN_TOKEN: 't', DATABASE_URL: 'sqlite::memory:', DELIVERY_RETRY_SCHEDULE: '5s,soon' },
      'DELIVERY_RETRY_SCHEDULE: retry schedule "5s,soon": "soon" is not a duration such as 5s, 30m or 2h (units ms, s, m, h, d)');
    await refused(['serve', '--port', '70000'], { ADMIN_TOKEN: 't', DATABASE_URL: 'sqlite::memory:' }, 'PORT must be an integer from 0 to 65535; got "70000"');
  });

  it('a sandbox --callback-url that cannot receive messages', async () => {
    await refused(['sandbox', '--callback-url', 'ftp://partner.example/hooks', '--port', '0'], { DATABASE_URL: `sqlite:${join(dir, 'sandbox.db')}` },
      'CALLBACK_URL (--callback-url) "ftp://partner.example/hooks" cannot receive messages: phase QA accepts only http: or https: callback URLs');
  });

  it('a SQLite file that cannot be created', async () => {
    const notADirectory = join(dir, 'plain-file');
    writeFileSync(notADirectory, '');
    const { code, stderr } = await runCli(['migrate'], { DATABASE_URL: `sqlite:${notADirectory}/x.db` });
    expect(code).toBe(2);
    expect(stderr).toMatch(/^appliance-cloud: DATABASE_URL: cannot open the SQLite file of sqlite:.*plain-file\/x\.db \(.*\); name a writable path, as in sqlite:\.\/data\/appliance-cloud\.db\n$/);
  });

  it('admin on a SQLite file that does not exist refuses rather than creating an empty database', async () => {
    const typo = join(dir, 'typo', 'x.db');
    await refused(['admin', 'services', 'list', '--database-url', `sqlite:${typo}`], {},
      `DATABASE_URL: no database at ${typo}; check the path, or create it with \`appliance-cloud migrate --database-url sqlite:${typo}\``);
    const created = await runCli(['migrate', '--database-url', `sqlite:${typo}`]);
    expect(created.code, created.stderr).toBe(0);
    const listed = await runCli(['admin', 'services', 'list', '--database-url', `sqlite:${typo}`]);
    expect([listed.code, JSON.parse(listed.stdout)]).toEqual([0, []]);
  });

  it('migrate on a PostgreSQL database that does not exist', async (context) => {
    const adminUrl = postgresAdminUrl();
    const down = await postgresUnreachable(adminUrl);
    if (down) return context.skip(down);
    const url = new URL(adminUrl);
    url.pathname = '/appliance_cloud_missing';
    await refused(['migrate'], { DATABASE_URL: url.toString() },
      `DATABASE_URL: database "appliance_cloud_missing" does not exist on ${url.host}${url.port ? '' : ':5432'}; create it (createdb appliance_cloud_missing) or name an existing one`);
  });

  it('sim with something other than appliance-cloud answering at --url', async () => {
    const other = createHttpServer((_request, response) => response.writeHead(404, { 'content-type': 'text/html' }).end('<!DOCTYPE html><p>Not found</p>'));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    try {
      await refused(['sim', 'time-scale', '60', '--url', url, '--admin-token', 't'], {},
        `--url: ${url} answered HTTP 404 without an appliance-cloud envelope; pass --url <the URL the server printed>`);
    } finally {
      other.close();
    }
  });

  it('sim with no server running', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    await refused(['sim', 'time-scale', '60', '--url', url, '--admin-token', 't'], {},
      `--url: no appliance-cloud server answers at ${url} (ECONNREFUSED); start one with \`appliance-cloud sandbox\`, or pass --url <the URL it printed>`);
  });
});
