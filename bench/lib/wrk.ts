/**
 * wrk as a second load generator for the HTTP scenarios (issue 16): written in C with its own event
 * loop, it measures the servers without Node's event loop on the client side. One thread, the same
 * connections as autocannon; its Lua script sends the scenario's requests in turn. Optional: where
 * `wrk` is not on the PATH (Debian: `apt-get install wrk`), the scenarios report autocannon's figures alone.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HttpRequest, LoadResult, LoadSpec } from './load.js';

export function wrkAvailable(): boolean {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    return true;
  } catch (error) {
    // wrk --version exits 1 after printing its version; only a missing binary is ENOENT.
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}

/** A Lua string literal; the requests are ASCII (headers, ids, JSON bodies of ASCII). */
function lua(text: string): string {
  if (!/^[\x20-\x7e]*$/.test(text)) throw new Error(`wrk: a request holds a character outside printable ASCII: ${text}`);
  return JSON.stringify(text);
}

/**
 * The script: every request prepared once by wrk.format, sent in turn. Prepared when the script
 * loads, before wrk knows the host, so each names it (Node answers 400 to HTTP/1.1 without Host).
 */
export function wrkScript(host: string, requests: HttpRequest[]): string {
  const formatted = requests.map(({ method, path, headers, body }) => {
    const table = Object.entries({ host, ...headers }).map(([name, value]) => `[${lua(name)}] = ${lua(value)}`).join(', ');
    return `  wrk.format(${lua(method)}, ${lua(path)}, { ${table} }, ${body === undefined ? 'nil' : lua(body)}),`;
  });
  return [
    'local requests = {', ...formatted, '}',
    'local turn = 0',
    'request = function()',
    '  turn = turn % #requests + 1',
    '  return requests[turn]',
    'end',
    '',
  ].join('\n');
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

function durationMs(text: string): number {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(text);
  if (!match) throw new Error(`wrk: unreadable duration ${text}`);
  return Number(match[1]) * UNIT_MS[match[2]!]!;
}

/** Reads wrk's report (`--latency`). */
export function parseWrk(output: string): LoadResult {
  const number = (pattern: RegExp) => Number(pattern.exec(output)?.[1] ?? Number.NaN);
  const latency = (percent: string) => durationMs(new RegExp(`^\\s+${percent}%\\s+(\\S+)`, 'm').exec(output)?.[1] ?? '');
  const total = number(/(\d+) requests in/);
  const seconds = durationMs(/requests in ([\d.]+\w+),/.exec(output)?.[1] ?? '');
  const non2xx = number(/Non-2xx or 3xx responses: (\d+)/) || 0;
  const errors = [...(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output) ?? [])].slice(1).reduce((sum, n) => sum + Number(n), 0);
  const ok = total - non2xx;
  return {
    requestsPerSecond: ok / (seconds / 1000),
    p50Ms: latency('50'),
    p99Ms: latency('99'),
    maxMs: durationMs(/Latency\s+\S+\s+\S+\s+(\S+)/.exec(output)?.[1] ?? ''),
    ok,
    non2xx,
    errors,
    seconds: seconds / 1000,
  };
}

/** Runs wrk against the spec's URL; throws when any answer was not 2xx, as `load` does. */
export async function wrkLoad(spec: LoadSpec): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'appliance-cloud-wrk-'));
  try {
    const script = join(dir, 'requests.lua');
    writeFileSync(script, wrkScript(new URL(spec.url).host, spec.perConnection.flat()));
    const output = await new Promise<string>((resolve, reject) => {
      execFile('wrk', ['-t1', `-c${spec.connections}`, `-d${spec.seconds}s`, '--latency', '-s', script, spec.url], (error, stdout, stderr) => {
        if (error) reject(new Error(`wrk failed: ${stderr || error.message}`));
        else resolve(stdout);
      });
    });
    const result = parseWrk(output);
    if (result.non2xx > 0 || result.errors > 0 || !(result.ok > 0)) {
      throw new Error(`wrk on ${spec.url}: ${result.ok} ok, ${result.non2xx} non-2xx, ${result.errors} errors\n${output}`);
    }
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
