/**
 * The CLI as a child process, run from source through tsx so that no build is needed: what a user
 * runs, with real exit codes, signals and stdout.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SETTING_NAMES } from '../../src/cli/settings.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The parent's environment without any setting, so that only what a test passes applies. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of [...SETTING_NAMES, 'CALLBACK_URL']) delete env[name];
  // No broker port to collide on, and only warnings unless a test asks for more.
  return { ...env, MQTT_PORT: '0', LOG_LEVEL: 'warn', ...extra };
}

/** Starts `appliance-cloud …args`. */
export function startCli(args: string[], env: Record<string, string> = {}): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], { cwd: ROOT, env: childEnv(env) });
}

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Collects a child's output until it exits. */
export function finished(child: ChildProcessWithoutNullStreams): Promise<Finished> {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs `appliance-cloud …args` to its end. */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<Finished> {
  return finished(startCli(args, env));
}

/** Resolves with the stdout so far once it matches `ready`; rejects if the child exits first. */
export function stdoutUntil(child: ChildProcessWithoutNullStreams, ready: RegExp): Promise<string> {
  let stdout = '';
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (ready.test(stdout)) resolve(stdout);
    });
    child.on('close', (code) => reject(new Error(`exited ${code} before ready\nstdout:\n${stdout}\nstderr:\n${stderr}`)));
  });
}

/** The exit code once the child has exited. */
export function exitCode(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)));
}
