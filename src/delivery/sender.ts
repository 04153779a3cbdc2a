/** One HTTP attempt of one delivery, over a pooled keep-alive agent guarded against SSRF. */
import { Agent } from 'undici';
import { PACKAGE_VERSION } from '../config.js';
import { systemClock, type Clock } from '../ids.js';
import { createAddressGuard, type Phase, type UrlCheck } from './address-guard.js';
import { parseRetryAfter } from './schedule.js';

export interface SenderOptions {
  phase: Phase;
  allowList: readonly string[];
  /** Covers connect, response headers and the (capped) response body together. */
  timeoutMs?: number;
  maxResponseBytes?: number;
  /** Keeps one busy service from opening unbounded sockets to its receiver. */
  connectionsPerOrigin?: number;
  /** Turns a Retry-After HTTP-date into a delay. */
  clock?: Clock;
}

export interface AttemptOutcome {
  /** A 2xx, headers and body within the timeout. */
  ok: boolean;
  status: number | null;
  /** At most maxResponseBytes of the response body, as UTF-8. */
  body: string | null;
  durationMs: number;
  retryAfterMs?: number;
  error?: string;
  /** 410 Gone: the receiver asks for its endpoint to be disabled. */
  gone: boolean;
}

export interface Sender {
  /** POSTs a JSON body; network failures become an outcome with `error`, never a rejection. */
  send(url: string, headers: Readonly<Record<string, string>>, body: string): Promise<AttemptOutcome>;
  close(): Promise<void>;
}

/** Names the sender to receivers' logs and firewalls. */
export const USER_AGENT = `appliance-cloud/${PACKAGE_VERSION}`;

/** How many URLs' checks a sender remembers: past that it starts over. */
const CHECKED_URLS = 10_000;

/** A sender with one connection pool for all receivers; undici follows no redirects unless asked. */
export function createSender({
  phase,
  allowList,
  timeoutMs = 10_000,
  maxResponseBytes = 4096,
  connectionsPerOrigin = 8,
  clock = systemClock,
}: SenderOptions): Sender {
  const guard = createAddressGuard({ phase, allowList });
  const agent = new Agent({ connections: connectionsPerOrigin, connect: { lookup: guard.lookup, timeout: timeoutMs } });
  // A URL's scheme and literal address never change, and the same few URLs get every attempt: each
  // is checked and split into the agent's origin and path once, not parsed again per request.
  const checked = new Map<string, Target>();
  const checkUrl = (url: string): Target => {
    let target = checked.get(url);
    if (!target) {
      if (checked.size >= CHECKED_URLS) checked.clear();
      const check = guard.checkUrl(url);
      target = check.ok ? splitUrl(url) : check;
      checked.set(url, target);
    }
    return target;
  };

  async function send(url: string, headers: Readonly<Record<string, string>>, body: string): Promise<AttemptOutcome> {
    const started = performance.now();
    const elapsed = (): number => performance.now() - started;
    const target = checkUrl(url);
    if (!target.ok) return { ok: false, status: null, body: null, durationMs: elapsed(), error: target.reason, gone: false };

    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), timeoutMs);
    let status: number | null = null;
    try {
      const response = await agent.request({
        origin: target.origin,
        path: target.path,
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'user-agent': USER_AGENT },
        body,
        signal: timeout.signal,
      });
      status = response.statusCode;
      const retryAfter = response.headers['retry-after'];
      const retryAfterMs = parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, clock.now());
      const text = await readCapped(response.body, maxResponseBytes);
      return { ok: status >= 200 && status < 300, status, body: text, durationMs: elapsed(), retryAfterMs, gone: status === 410 };
    } catch (error) {
      const reason = timeout.signal.aborted ? `timed out after ${timeoutMs} ms` : describe(error);
      return { ok: false, status, body: null, durationMs: elapsed(), error: reason, gone: false };
    } finally {
      clearTimeout(timer);
    }
  }

  return { send, close: () => agent.close() };
}

type Target = { ok: true; origin: string; path: string } | Exclude<UrlCheck, { ok: true }>;

/** What undici's request(url) takes from a URL: the fragment stays behind, as a browser's would. */
function splitUrl(url: string): Target {
  const parsed = new URL(url);
  return { ok: true, origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
}

/** Keeps the first `max` bytes; past them the stream is dropped (closing the socket) rather than drained. */
async function readCapped(body: AsyncIterable<Buffer>, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk.subarray(0, max - size));
    size += Math.min(chunk.length, max - size);
    if (size >= max) break;
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A one-line reason; Happy Eyeballs reports one AggregateError with an empty message for all addresses. */
function describe(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return error.errors.map(describe).join('; ');
  return error instanceof Error ? error.message || error.name : String(error);
}
