/**
 * The processes a chaos run kills and starts again: `appliance-cloud serve` compiled (`dist/`), always
 * on the same HTTP (and embedded MQTT) port and database, and a private Mosquitto on a free port.
 * Their output goes to log files in the run's directory, read back for the errors they logged.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SETTING_NAMES } from '../../src/cli/settings.js';
import type { Cleanup } from './cleanup.js';

/** How long a node may take to answer /ready 200 (a database that is down delays it). */
const START_TIMEOUT_MS = 90_000;

/**
 * A child whose stdout and stderr append to `logFile`, in a process group of its own: a Ctrl-C in the
 * terminal reaches the chaos script only, which ends its children itself.
 */
function spawnLogged(cleanup: Cleanup, command: string, args: string[], env: NodeJS.ProcessEnv, logFile: string): ChildProcess {
  const log = openSync(logFile, 'a');
  try {
    return cleanup.track(spawn(command, args, { env, stdio: ['ignore', log, log], detached: true }));
  } finally {
    closeSync(log);
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** One `serve` node. `up` from its first 200 of /ready until it is killed or exits. */
export class ServeNode {
  readonly url: string;
  #child: ChildProcess | null = null;
  #up = false;
  #killing = false;
  #closed = false;
  /** Starts that exited before answering /ready (the database down, say). */
  failedStarts = 0;
  /** Exits nobody asked for: a crash. The node is started again. */
  readonly unexpectedExits: string[] = [];

  constructor(
    readonly name: string,
    readonly port: number,
    private readonly entry: string,
    private readonly settings: Record<string, string>,
    readonly logFile: string,
    private readonly cleanup: Cleanup,
  ) {
    this.url = `http://127.0.0.1:${port}`;
  }

  get up(): boolean {
    return this.#up;
  }

  /** Starts the node, again after a failed start, until it answers /ready 200. */
  async start(): Promise<void> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!(await this.#startOnce())) {
      if (this.#closed) throw new Error(`${this.name} was closed while starting`);
      this.failedStarts++;
      if (Date.now() > deadline) throw new Error(`${this.name} did not start within ${START_TIMEOUT_MS} ms; see ${this.logFile}`);
      await sleep(500);
    }
  }

  /** SIGKILL, as a crash or the OOM killer would. */
  async kill(): Promise<void> {
    const child = this.#child;
    if (!child) return;
    this.#up = false;
    this.#killing = true;
    child.kill('SIGKILL');
    await exited(child);
    this.#killing = false;
  }

  /** SIGKILL, and no start again: for cleanup. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.kill();
  }

  /** SIGTERM: drains and exits. */
  async stop(): Promise<void> {
    const child = this.#child;
    if (!child) return;
    this.#up = false;
    this.#killing = true;
    child.kill('SIGTERM');
    await exited(child);
  }

  async #startOnce(): Promise<boolean> {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const name of SETTING_NAMES) delete env[name];
    const child = spawnLogged(this.cleanup, process.execPath, [this.entry, 'serve'], { ...env, ...this.settings, HOST: '127.0.0.1', PORT: String(this.port) }, this.logFile);
    this.#child = child;
    while (child.exitCode === null && child.signalCode === null) {
      const ready = await fetch(`${this.url}/ready`, { signal: AbortSignal.timeout(5000) }).then((res) => res.status === 200, () => false);
      if (ready) {
        this.#up = true;
        child.once('exit', (code, signal) => this.#exited(child, code, signal));
        return true;
      }
      await sleep(100);
    }
    return false;
  }

  #exited(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.#killing || child !== this.#child) return;
    this.#up = false;
    this.unexpectedExits.push(`exit code ${code}, signal ${signal}`);
    this.start().catch((error: unknown) => this.unexpectedExits.push(`and no restart: ${String(error)}`));
  }
}

export interface Mosquitto {
  url: string;
  stop(): Promise<void>;
}

/**
 * A Mosquitto of the run's own on a free port (never the shared one on 1883), anonymous, without
 * persistence, and with no cap on the messages it queues for a client: a broker dropping what it
 * queued would be counted as the cloud's loss.
 */
export async function startMosquitto(dir: string, port: number, cleanup: Cleanup): Promise<Mosquitto> {
  const config = join(dir, 'mosquitto.conf');
  writeFileSync(config, [`listener ${port} 127.0.0.1`, 'allow_anonymous true', 'persistence false', 'max_queued_messages 0', 'max_inflight_messages 0', ''].join('\n'));
  const child = spawnLogged(cleanup, 'mosquitto', ['-c', config], process.env, join(dir, 'mosquitto.log'));
  const deadline = Date.now() + 10_000;
  while (!(await listening(port))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`mosquitto did not start: ${readFileSync(join(dir, 'mosquitto.log'), 'utf8')}`);
    await sleep(100);
  }
  return {
    url: `mqtt://127.0.0.1:${port}`,
    async stop() {
      child.kill('SIGTERM');
      await exited(child);
    },
  };
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface LoggedProblem {
  message: string;
  count: number;
}

/** The warnings and errors of pino JSON lines in `logFile`, grouped by message and error, most frequent first. */
export function loggedProblems(logFile: string): LoggedProblem[] {
  if (!existsSync(logFile)) return [];
  const counts = new Map<string, number>();
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    const entry = parseLine(line);
    if (!entry || (entry.level ?? 0) < 40) continue;
    const message = [entry.msg, entry.err?.message?.slice(0, 160)].filter(Boolean).join(': ');
    counts.set(message, (counts.get(message) ?? 0) + 1);
  }
  return [...counts].map(([message, count]) => ({ message, count })).sort((a, b) => b.count - a.count);
}

function parseLine(line: string): { level?: number; msg?: string; err?: { message?: string } } | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    return JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
  } catch {
    return undefined;
  }
}
