/**
 * The server under test: `appliance-cloud serve` in a child process of its own, on a seeded SQLite
 * file, with the settings an operator would use for a benchmark.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync } from 'node:fs';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { SETTING_NAMES } from '../../src/cli/settings.js';
import { cpuSecondsOf, memoryOf } from './proc.js';

// MIN_ADMIN_TOKEN_LENGTH characters or more, so that serve's warning of a short token does not come between the figures.
export const ADMIN_TOKEN = 'bench-admin-token-of-thirty-two-c';

/**
 * Warnings only: one JSON line per request at `info` would measure pino writing to a pipe. The rate
 * limiter (1000 requests/s per service by default) is off, or it would be what is measured.
 */
export const SERVER_CONDITIONS = { LOG_LEVEL: 'warn', RATE_LIMIT_PER_SECOND: '0', MQTT_PORT: '0' } as const;

export interface ServerUnderTest {
  url: string;
  pid: number;
  /** From spawning the process to the first 200 of GET /ready. */
  startupMs: number;
  /** CPU time the process had used by then: what start-up costs, whatever else the machine does. */
  startupCpuSeconds: number;
  /** Resident memory now and at its peak, in MB (Linux /proc). */
  memory(): { rssMb: number; peakRssMb: number };
  stop(): Promise<void>;
}

/** A port free at the time of asking. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return address.port;
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
}

/**
 * Starts `node <entry> serve` on `databaseFile`; resolves once /ready answers 200. Its log goes to
 * the bench's terminal, or to `logFile` (a server logging every request, as an operator's would go
 * to a file or a collector, not to a terminal).
 */
export async function startServer(entry: string, databaseFile: string, extraEnv: Record<string, string> = {}, logFile?: string): Promise<ServerUnderTest> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SETTING_NAMES) delete env[name];
  Object.assign(env, SERVER_CONDITIONS, {
    ADMIN_TOKEN,
    DATABASE_URL: `sqlite:${databaseFile}`,
    HOST: '127.0.0.1',
    PORT: String(port),
    ...extraEnv,
  });
  const started = performance.now();
  const child = spawn(process.execPath, [...(process.env.BENCH_SERVER_NODE_OPTIONS?.split(' ').filter(Boolean) ?? []), entry, 'serve'], {
    env,
    stdio: ['ignore', logFile === undefined ? 'inherit' : openSync(logFile, 'a'), 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  let startupMs = Number.NaN;
  let startupCpuSeconds = Number.NaN;
  while (child.exitCode === null) {
    const ready = await fetch(`${url}/ready`).then((res) => res.status === 200, () => false);
    if (ready) {
      startupMs = performance.now() - started;
      startupCpuSeconds = cpuSecondsOf(child.pid!);
      break;
    }
    if (performance.now() - started > 60_000) break;
    await sleep(5);
  }
  if (Number.isNaN(startupMs)) {
    child.kill('SIGKILL');
    throw new Error(`the server did not become ready (exit code ${child.exitCode})`);
  }
  return {
    url,
    pid: child.pid!,
    startupMs,
    startupCpuSeconds,
    memory: () => memoryOf(child.pid!),
    async stop() {
      const gone = exited(child);
      child.kill('SIGTERM');
      await gone;
    },
  };
}

/** Runs `fn` with a server on `databaseFile`, stopping it afterwards whatever happens. */
export async function withServer<T>(entry: string, databaseFile: string, fn: (server: ServerUnderTest) => Promise<T>): Promise<T> {
  const server = await startServer(entry, databaseFile);
  try {
    return await fn(server);
  } finally {
    await server.stop();
  }
}

/** Starts and stops a server on `databaseFile` `times` times; the start-ups, in order. */
export async function startups(entry: string, databaseFile: string, times: number): Promise<{ ms: number; cpuSeconds: number }[]> {
  const measured: { ms: number; cpuSeconds: number }[] = [];
  for (let i = 0; i < times; i += 1) {
    const server = await startServer(entry, databaseFile);
    measured.push({ ms: server.startupMs, cpuSeconds: server.startupCpuSeconds });
    await server.stop();
  }
  return measured;
}
