/** One HTTP attempt of one delivery, over a pooled keep-alive agent guarded against SSRF. */
import type { IncomingHttpHeaders } from 'node:http';
import { Agent, type Dispatcher } from 'undici';
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

  function send(url: string, headers: Readonly<Record<string, string>>, body: string): Promise<AttemptOutcome> {
    const started = performance.now();
    const target = checkUrl(url);
    if (!target.ok) return Promise.resolve({ ok: false, status: null, body: null, durationMs: performance.now() - started, error: target.reason, gone: false });
    return new Promise((resolve) => {
      const attempt = new Attempt({ started, timeoutMs, maxResponseBytes, clock }, resolve);
      agent.dispatch(
        { origin: target.origin, path: target.path, method: 'POST', headers: { ...headers, 'content-type': 'application/json', 'user-agent': USER_AGENT }, body },
        attempt,
      );
    });
  }

  return { send, close: () => agent.close() };
}

type Target = { ok: true; origin: string; path: string } | Exclude<UrlCheck, { ok: true }>;

/** What undici's request(url) takes from a URL: the fragment stays behind, as a browser's would. */
function splitUrl(url: string): Target {
  const parsed = new URL(url);
  return { ok: true, origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
}

/**
 * One request's undici handler: the status, Retry-After and the first `max` bytes of the body, with
 * no response stream or abort signal built per attempt (each POST's own cost, under the dispatcher's
 * load, was mostly those). Past `max` bytes the request is aborted, closing the socket, rather than drained.
 */
class Attempt implements Dispatcher.DispatchHandler {
  readonly #timer: NodeJS.Timeout;
  #controller: Dispatcher.DispatchController | undefined;
  #timedOut: string | undefined;
  #settled = false;
  #status: number | null = null;
  #retryAfter: string | undefined;
  readonly #chunks: Buffer[] = [];
  #size = 0;

  constructor(
    private readonly settings: { started: number; timeoutMs: number; maxResponseBytes: number; clock: Clock },
    private readonly resolve: (outcome: AttemptOutcome) => void,
  ) {
    this.#timer = setTimeout(() => {
      // Aborted now, or as soon as the request gets a connection.
      this.#timedOut = `timed out after ${settings.timeoutMs} ms`;
      this.#controller?.abort(new Error(this.#timedOut));
    }, settings.timeoutMs);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#timedOut !== undefined) controller.abort(new Error(this.#timedOut));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    // An informational answer (100 Continue) comes before the real one.
    if (statusCode < 200) return;
    this.#status = statusCode;
    const retryAfter = headers['retry-after'];
    this.#retryAfter = Array.isArray(retryAfter) ? retryAfter[0] : retryAfter;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return;
    const max = this.settings.maxResponseBytes;
    this.#chunks.push(chunk.subarray(0, max - this.#size));
    this.#size += Math.min(chunk.length, max - this.#size);
    if (this.#size >= max) {
      this.#answered();
      controller.abort(new Error('response body past maxResponseBytes'));
    }
  }

  onResponseEnd(): void {
    this.#answered();
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    // The partner answered in time, and only its body stalled or broke: the answer is its status (DESIGN C: a 2xx
    // within the timeout), and the body an excerpt of what came. Failed for the body, a 2xx would be sent again:
    // a duplicate without a crash.
    if (this.#status !== null) return this.#answered();
    const reason = this.#timedOut ?? describe(error);
    this.#settle({ ok: false, status: this.#status, body: null, durationMs: this.#elapsed(), error: reason, gone: false });
  }

  #answered(): void {
    const status = this.#status ?? 0;
    this.#settle({
      ok: status >= 200 && status < 300,
      status,
      body: Buffer.concat(this.#chunks).toString('utf8'),
      durationMs: this.#elapsed(),
      retryAfterMs: parseRetryAfter(this.#retryAfter, this.settings.clock.now()),
      gone: status === 410,
    });
  }

  #settle(outcome: AttemptOutcome): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    this.resolve(outcome);
  }

  #elapsed(): number {
    return performance.now() - this.settings.started;
  }
}

/** A one-line reason; Happy Eyeballs reports one AggregateError with an empty message for all addresses. */
function describe(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return error.errors.map(describe).join('; ');
  return error instanceof Error ? error.message || error.name : String(error);
}
