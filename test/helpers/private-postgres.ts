/**
 * A throwaway PostgreSQL server of a test's own, in a temporary directory on a free port, for tests
 * that stop or restart the database: the shared server on 127.0.0.1:5432 is used by other test files
 * at the same time and is never touched. fsync is off: nothing here needs to survive a power cut, only
 * a killed server.
 *
 * initdb and postgres refuse to run as root, so under root they run as the `postgres` OS user.
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports.js';

const run = promisify(execFile);
const BIN = '/usr/lib/postgresql/15/bin';
const asRoot = process.getuid?.() === 0;

/** Why a private server cannot be started here, or undefined when it can. */
export function privatePostgresMissing(): string | undefined {
  const missing = ['initdb', 'pg_ctl', 'postgres'].filter((name) => !existsSync(join(BIN, name)));
  if (missing.length) return `no ${missing.join(', ')} under ${BIN}`;
  if (asRoot && !existsSync('/usr/sbin/runuser')) return 'running as root without runuser to become the postgres user';
  return undefined;
}

export interface PrivatePostgres {
  /** The `postgres` database of the server, as superuser `postgres` (trust authentication). */
  url: string;
  /** Stops the server: `fast` closes sessions cleanly, `immediate` drops them as a crash would. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts it again on the same port and data; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it, waits `downMs`, starts it again. */
  restart(downMs?: number): Promise<void>;
  /** Stops it and deletes its directory. */
  dispose(): Promise<void>;
}

/** Creates, starts and returns a new server; a few seconds (initdb). */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'appliance-cloud-pg-'));
  const data = join(dir, 'data');
  const port = await freePort();
  if (asRoot) {
    const { uid, gid } = await postgresUser();
    chownSync(dir, uid, gid);
  }
  const pg = (tool: string, args: string[]) => (asRoot ? run('runuser', ['-u', 'postgres', '--', join(BIN, tool), ...args]) : run(join(BIN, tool), args));
  let running = false;

  const start = async () => {
    // The socket goes in our directory, beside no other server's; TCP only on loopback. Commits stay
    // synchronous: without fsync they reach the OS, which outlives a killed server, so a commit
    // acknowledged before `stop('immediate')` survives it, as on a real server.
    const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
    await pg('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-o', options, '-w', '-t', '30', 'start']);
    running = true;
  };
  const stop = async (mode: 'fast' | 'immediate' = 'fast') => {
    if (!running) return;
    await pg('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '30', 'stop']);
    running = false;
  };

  try {
    await pg('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-sync', '--no-instructions']);
    await start();
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop,
    start,
    async restart(downMs = 0) {
      await stop();
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await start();
    },
    async dispose() {
      await stop('immediate').catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

