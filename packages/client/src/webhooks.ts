/**
 * Verifying a delivery (DESIGN C): Standard Webhooks `v1` signatures (HMAC-SHA256 over
 * `id.timestamp.body`, base64), any of several secrets, a timestamp window. Web Crypto only, so it
 * runs on Node, Deno, Bun and edge runtimes alike; the comparison is the platform's HMAC verify.
 */
import type { Delivery, WebhookMessage } from './messages.js';

/** Headers as any framework hands them: a Fetch `Headers`, or Node's lower-cased record. */
export type HeadersLike = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

export type WebhookFailure = 'missing-headers' | 'bad-timestamp' | 'timestamp-too-old' | 'timestamp-too-new' | 'no-matching-signature' | 'bad-body';

/** A delivery that did not verify: answer it 400 (or 401) and do not act on it. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(readonly reason: WebhookFailure, message: string) {
    super(message);
  }
}

export interface VerifyOptions {
  /** How far `webhook-timestamp` may be from now, in seconds; default 300, as the reference verifiers. */
  toleranceSeconds?: number;
  /** The clock, in epoch milliseconds; `Date.now` by default. */
  now?: () => number;
}

const SECRET_PREFIX = 'whsec_';
const encoder = new TextEncoder();

/**
 * Checks a delivery's signature and freshness and parses its body. `rawBody` must be the bytes as
 * received, before any JSON parsing; `secrets` may hold the current and the previous secret during a
 * rotation. Rejects with {@link WebhookVerificationError}.
 */
export async function verifyWebhook(
  headers: HeadersLike,
  rawBody: string | Uint8Array,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): Promise<WebhookMessage> {
  const id = header(headers, 'webhook-id');
  const timestampText = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestampText || !signatures) throw new WebhookVerificationError('missing-headers', 'webhook-id, webhook-timestamp and webhook-signature are required');
  if (!/^\d{1,15}$/.test(timestampText)) throw new WebhookVerificationError('bad-timestamp', `webhook-timestamp is not unix seconds: ${timestampText}`);
  const timestamp = Number(timestampText);
  const now = Math.floor((options.now ?? Date.now)() / 1000);
  const tolerance = options.toleranceSeconds ?? 300;
  if (now - timestamp > tolerance) throw new WebhookVerificationError('timestamp-too-old', `webhook-timestamp is more than ${tolerance} s old`);
  if (timestamp - now > tolerance) throw new WebhookVerificationError('timestamp-too-new', `webhook-timestamp is more than ${tolerance} s ahead`);

  const body = typeof rawBody === 'string' ? encoder.encode(rawBody) : rawBody;
  const signed = concat(encoder.encode(`${id}.${timestamp}.`), body);
  const presented = signatures.split(' ').filter((s) => s.startsWith('v1,')).map((s) => decodeBase64(s.slice(3))).filter((s) => s !== null);
  if (!(await anySignatureMatches(typeof secrets === 'string' ? [secrets] : secrets, signed, presented))) {
    throw new WebhookVerificationError('no-matching-signature', 'no webhook-signature matches any of the secrets');
  }
  const sequence = header(headers, 'webhook-sequence');
  return parseMessage(new TextDecoder().decode(body), { webhookId: id, timestamp, sequence: sequence && /^\d+$/.test(sequence) ? Number(sequence) : null });
}

/** Named through the function, so the module type-checks with or without the DOM library. */
type HmacKey = ReturnType<typeof crypto.subtle.importKey>;
/** Imported keys by secret: importing is most of a verification's cost, and a receiver has one or two secrets. */
const keys = new Map<string, HmacKey>();
const MAX_KEYS = 16;

function keyOf(secret: string): HmacKey {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey('raw', secretBytes(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
    if (keys.size >= MAX_KEYS) keys.delete(keys.keys().next().value!);
    keys.set(secret, key);
  }
  return key;
}

async function anySignatureMatches(secrets: readonly string[], signed: Uint8Array<ArrayBuffer>, presented: Uint8Array<ArrayBuffer>[]): Promise<boolean> {
  for (const secret of secrets) {
    const key = await keyOf(secret);
    for (const signature of presented) {
      if (await crypto.subtle.verify('HMAC', key, signature, signed)) return true;
    }
  }
  return false;
}

/** The HMAC key: the base64 after `whsec_` (the prefix may be left out, as the reference libraries allow). */
function secretBytes(secret: string): Uint8Array<ArrayBuffer> {
  const bytes = decodeBase64(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret);
  if (!bytes || bytes.length === 0) throw new TypeError('a webhook secret is "whsec_" followed by base64');
  return bytes;
}

function parseMessage(text: string, delivery: Delivery): WebhookMessage {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new WebhookVerificationError('bad-body', 'the signed body is not JSON');
  }
  const record = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  const inner = record.push ?? record.event;
  const pushType = typeof inner === 'object' && inner !== null ? (inner as { pushType?: unknown }).pushType : undefined;
  if (typeof record.messageId !== 'string' || typeof pushType !== 'string') {
    throw new WebhookVerificationError('bad-body', 'the signed body is not a push or event message');
  }
  return { ...record, pushType, delivery } as WebhookMessage;
}

function header(headers: HeadersLike, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
    if (key.toLowerCase() === name) return typeof value === 'string' ? value : value?.[0];
  }
  return undefined;
}

function decodeBase64(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return null;
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
