/** Runs the load generator (autocannon) in a child process against a URL and reads what it measured. */
import { fork } from 'node:child_process';

export interface HttpRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface LoadSpec {
  url: string;
  connections: number;
  seconds: number;
  /** Connection i sends perConnection[i % length] over and over. */
  perConnection: HttpRequest[][];
}

export interface LoadResult {
  /** Successful (2xx) answers per second. */
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  ok: number;
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  seconds: number;
}

const CHILD = new URL('./load-child.ts', import.meta.url);

/** Throws when any answer was not 2xx: a benchmark of refusals measures nothing. */
export async function load(spec: LoadSpec): Promise<LoadResult> {
  const child = fork(CHILD, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const result = await new Promise<LoadResult>((resolve, reject) => {
    child.once('message', (message) => resolve(message as LoadResult));
    child.once('exit', (code) => reject(new Error(`the load generator exited with code ${code} before answering`)));
    child.send(spec);
  });
  if (result.non2xx > 0 || result.errors > 0 || result.ok === 0) {
    throw new Error(`load on ${spec.url}: ${result.ok} ok, ${result.non2xx} non-2xx, ${result.errors} errors`);
  }
  return result;
}
