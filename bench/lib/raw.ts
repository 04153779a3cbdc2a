/** The raw baseline's side in the bench process: capture the app's answers, replay them from a child. */
import { fork } from 'node:child_process';
import type { HttpRequest } from './load.js';

export interface CapturedResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The headers of the app's answer that describe its bytes; Node adds date and keep-alive itself. */
const KEPT_HEADERS = ['content-type', 'etag'];

/** Sends each distinct request once to the app and keeps its answer under `METHOD path`; throws on a non-200. */
export async function capture(url: string, requests: HttpRequest[]): Promise<Record<string, CapturedResponse>> {
  const captured: Record<string, CapturedResponse> = {};
  for (const request of requests) {
    const key = `${request.method} ${request.path}`;
    if (captured[key]) continue;
    const response = await fetch(`${url}${request.path}`, { method: request.method, headers: request.headers, body: request.body ?? null });
    const body = await response.text();
    if (response.status !== 200) throw new Error(`${key} answered ${response.status}: ${body}`);
    const headers: Record<string, string> = {};
    for (const name of KEPT_HEADERS) {
      const value = response.headers.get(name);
      if (value !== null) headers[name] = value;
    }
    captured[key] = { status: response.status, headers, body };
  }
  return captured;
}

export interface RawServer {
  url: string;
  pid: number;
  stop(): void;
}

/** Starts the raw server in a child process with the answers it replays. */
export async function startRawServer(responses: Record<string, CapturedResponse>): Promise<RawServer> {
  const child = fork(new URL('./raw-server.ts', import.meta.url), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port } = await new Promise<{ port: number }>((resolve, reject) => {
    child.once('message', (message) => resolve(message as { port: number }));
    child.once('exit', (code) => reject(new Error(`the raw server exited with code ${code}`)));
    child.send(responses);
  });
  return { url: `http://127.0.0.1:${port}`, pid: child.pid!, stop: () => child.disconnect() };
}
