/**
 * One call of the partner interface on the wire: the mandatory headers of DESIGN A.2 with a fresh
 * message id per attempt, a timeout per attempt joined to the caller's AbortSignal, the envelope of
 * A.3 unwrapped or thrown as an ApplianceCloudError, and the retries of DESIGN I.
 */
import { ApplianceCloudError } from './errors.js';
import { newMessageId } from './message-id.js';
import { abortable, sleep } from './sleep.js';

export interface TransportSettings {
  baseUrl: string;
  serviceId: string;
  serviceKey: string;
  countryCode: string;
  accessToken: () => Promise<string>;
  timeoutMs: number;
  maxRetries: number;
  maxRetryDelayMs: number;
  fetch: typeof fetch;
  /** Called with the headers of every answer the server gave, a refusal's too. */
  onAnswer?: (headers: Headers) => void;
}

/** Options every method takes. */
export interface CallOptions {
  /** Aborts the call (and any wait before a retry); the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Timeout of each attempt in milliseconds; the client's `timeoutMs` when left out. */
  timeoutMs?: number;
}

export interface Request {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface Answer<T> {
  response: T;
  headers: Headers;
  messageId: string;
}

/** Delays between retries of a network failure: short, as the server is usually back at once or not at all. */
const NETWORK_RETRY_DELAYS_MS = [100, 500, 2000];

export async function call<T>(settings: TransportSettings, request: Request, options: CallOptions = {}): Promise<Answer<T>> {
  for (let attempt = 0; ; attempt++) {
    const messageId = newMessageId();
    const outcome = await attemptOnce(settings, request, options, messageId);
    if (outcome.ok) return { response: outcome.response as T, headers: outcome.headers, messageId };
    const error = outcome.error;
    const delay = attempt < settings.maxRetries ? retryDelay(request, error, attempt, settings.maxRetryDelayMs) : null;
    if (delay === null) throw error;
    await sleep(delay, options.signal);
  }
}

/** How long to wait before retrying, or null when the failure is not retried. */
function retryDelay(request: Request, error: ApplianceCloudError, attempt: number, maxDelayMs: number): number | null {
  if (error.code === '1306' || error.httpStatus === 429) {
    // Retry-After is honoured as asked; a wait longer than the client allows is the caller's decision.
    const ms = (error.retryAfterSeconds ?? 1) * 1000;
    // Up to a fifth more, never less: calls refused in the same second do not all come back in the same millisecond.
    return ms <= maxDelayMs ? Math.min(ms * (1 + Math.random() / 5), maxDelayMs) : null;
  }
  // A server shutting down refuses every request before any route runs, and asks for it again: safe for any method.
  if (error.code === '2000' && error.httpStatus === 503) return NETWORK_RETRY_DELAYS_MS[Math.min(attempt, NETWORK_RETRY_DELAYS_MS.length - 1)]!;
  // A read is safe to send again; a control or subscription might have been applied before the failure.
  if (error.code === 'NETWORK' && request.method === 'GET') return NETWORK_RETRY_DELAYS_MS[Math.min(attempt, NETWORK_RETRY_DELAYS_MS.length - 1)]!;
  return null;
}

type Outcome = { ok: true; response: unknown; headers: Headers } | { ok: false; error: ApplianceCloudError };

async function attemptOnce(settings: TransportSettings, request: Request, options: CallOptions, messageId: string): Promise<Outcome> {
  const timeoutMs = options.timeoutMs ?? settings.timeoutMs;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  /** The caller's abort is rethrown as its reason; the rest is this attempt's TIMEOUT or NETWORK failure. */
  const failed = (cause: unknown): Outcome => {
    if (options.signal?.aborted) throw options.signal.reason;
    const timedOut = timeout.aborted;
    const message = timedOut
      ? `${request.method} ${request.path} did not answer within ${timeoutMs} ms`
      : `${request.method} ${request.path} failed on the network: ${(cause as Error).message}`;
    return { ok: false, error: new ApplianceCloudError({ code: timedOut ? 'TIMEOUT' : 'NETWORK', message, messageId, cause }) };
  };
  let token: string;
  try {
    // A provider may refresh over the network (oauth.refreshingTokenProvider): waiting for it is part of the attempt.
    token = await abortable(settings.accessToken(), signal);
  } catch (error) {
    if (signal.aborted) return failed(error);
    // fetch's own failure (the authorization server unreachable) is the network's: a read is tried again.
    if (error instanceof TypeError) return failed(error);
    const message = `${request.method} ${request.path}: the token provider failed: ${error instanceof Error ? error.message : String(error)}`;
    return { ok: false, error: new ApplianceCloudError({ code: 'TOKEN', message, messageId, cause: error }) };
  }
  const headers: Record<string, string> = {
    authorization: `Bearer ${token}`,
    'x-country-code': settings.countryCode,
    'x-message-id': messageId,
    'x-service-id': settings.serviceId,
    'x-service-key': settings.serviceKey,
    accept: 'application/json',
    ...request.headers,
  };
  if (request.body !== undefined) headers['content-type'] = 'application/json';
  // Called unbound: a Worker's or a browser's fetch throws Illegal invocation when `this` is another object.
  const send = settings.fetch;
  let response: Response;
  let text: string;
  try {
    // Appended, not resolved: a path in the base URL (a gateway's prefix) stays, as in LG's `{base_url}/devices`.
    response = await send(new URL(settings.baseUrl.replace(/\/+$/, '') + request.path), {
      method: request.method,
      headers,
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
      // The interface never redirects: a followed 301/302 turns a control into a GET, and sends x-service-key to another origin.
      redirect: 'manual',
      signal,
    });
    text = await response.text();
  } catch (cause) {
    return failed(cause);
  }
  settings.onAnswer?.(response.headers);
  return readEnvelope(response, text, messageId);
}

/** The envelope's `response`, or its `error` as an ApplianceCloudError. */
function readEnvelope(response: Response, text: string, messageId: string): Outcome {
  let envelope: { response?: unknown; error?: { code?: unknown; message?: unknown } } | undefined;
  try {
    envelope = JSON.parse(text) as typeof envelope;
  } catch {
    envelope = undefined;
  }
  const retryAfter = retryAfterSeconds(response.headers.get('retry-after'));
  const common = { httpStatus: response.status, messageId, ...(retryAfter === undefined ? {} : { retryAfterSeconds: retryAfter }) };
  if (typeof envelope !== 'object' || envelope === null) {
    const location = response.headers.get('location');
    const redirected = location === null ? '' : ` (redirected to ${location}: check baseUrl)`;
    return { ok: false, error: new ApplianceCloudError({ code: 'BAD_RESPONSE', message: `HTTP ${response.status} without the interface's envelope${redirected}: ${text.slice(0, 200)}`, ...common }) };
  }
  if (response.ok && 'response' in envelope) return { ok: true, response: envelope.response, headers: response.headers };
  const code = typeof envelope.error?.code === 'string' ? envelope.error.code : 'BAD_RESPONSE';
  const message = typeof envelope.error?.message === 'string' ? envelope.error.message : `HTTP ${response.status}: ${text.slice(0, 200)}`;
  return { ok: false, error: new ApplianceCloudError({ code, message, ...common }) };
}

/** `Retry-After` as seconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
function retryAfterSeconds(value: string | null): number | undefined {
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}
