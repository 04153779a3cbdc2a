/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): `v1` HMAC-SHA256 signatures over
 * `id.timestamp.body`, several per header so a rotated secret and its successor both verify.
 */
import { createHmac, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';
import type { Clock } from '../ids.js';

const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const UNIX_SECONDS = /^\d{1,15}$/;

/** The verifier libraries' default window, wide enough for clock skew, narrow enough against replay. */
export const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

export interface SignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

export interface SignInput {
  messageId: string;
  /** Unix seconds of this attempt: a retry is signed afresh, with the same id. */
  timestamp: number;
  body: string;
  /** One signature per secret: during a rotation both the old and the new one. */
  secrets: readonly string[];
}

export type VerifyResult =
  | { ok: true }
  | { ok: false; reason: 'missing-headers' | 'bad-timestamp' | 'timestamp-too-old' | 'timestamp-too-new' | 'no-matching-signature' };

export interface VerifyInput {
  body: string;
  /** As received; names are matched case-insensitively, a repeated header counts by its first value. */
  headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** Any one of them verifying is enough. */
  secrets: readonly string[];
  clock: Clock;
  toleranceSeconds?: number;
}

/** A new signing secret: `whsec_` and the base64 of 32 random bytes (an HMAC-SHA256 block's worth of key). */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** The three Standard Webhooks headers for one attempt of one message. */
export function signatureHeaders({ messageId, timestamp, body, secrets }: SignInput): SignatureHeaders {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new RangeError(`webhook timestamp must be whole unix seconds, got ${timestamp}`);
  }
  if (secrets.length === 0) throw new Error('at least one webhook secret is needed to sign');
  const signatures = secrets.map((secret) => `v1,${sign(secretKey(secret), messageId, timestamp, body).toString('base64')}`);
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatures.join(' '),
  };
}

/** Checks a received message as a partner would: timestamp within the window, one `v1` signature matching. */
export function verify({ body, headers, secrets, clock, toleranceSeconds = DEFAULT_TOLERANCE_SECONDS }: VerifyInput): VerifyResult {
  const id = header(headers, 'webhook-id');
  const timestampText = header(headers, 'webhook-timestamp');
  const signatureList = header(headers, 'webhook-signature');
  if (!id || !timestampText || !signatureList) return { ok: false, reason: 'missing-headers' };
  if (!UNIX_SECONDS.test(timestampText)) return { ok: false, reason: 'bad-timestamp' };
  const timestamp = Number(timestampText);
  const now = Math.floor(clock.now() / 1000);
  if (now - timestamp > toleranceSeconds) return { ok: false, reason: 'timestamp-too-old' };
  if (timestamp - now > toleranceSeconds) return { ok: false, reason: 'timestamp-too-new' };

  const presented = signatureList
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => Buffer.from(entry.slice(3)));
  for (const secret of secrets) {
    const expected = Buffer.from(sign(secretKey(secret), id, timestamp, body).toString('base64'));
    // Compare the base64 text, as the reference verifiers do; a length mismatch leaks nothing secret.
    if (presented.some((candidate) => candidate.length === expected.length && timingSafeEqual(candidate, expected))) {
      return { ok: true };
    }
  }
  return { ok: false, reason: 'no-matching-signature' };
}

function sign(key: KeyObject, messageId: string, timestamp: number, body: string): Buffer {
  return createHmac('sha256', key).update(`${messageId}.${timestamp}.${body}`).digest();
}

/** How many secrets' keys are kept decoded: past that the cache starts over. */
const CACHED_KEYS = 10_000;
/** Every attempt signs with its service's few secrets: each is checked and decoded once. */
const keys = new Map<string, KeyObject>();

/** The HMAC key is the base64-decoded part after `whsec_`; anything else is a configuration error. */
function secretKey(secret: string): KeyObject {
  let key = keys.get(secret);
  if (key) return key;
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : '';
  if (encoded === '' || !BASE64.test(encoded)) {
    throw new Error('a webhook secret must be "whsec_" followed by base64');
  }
  if (keys.size >= CACHED_KEYS) keys.clear();
  key = createSecretKey(Buffer.from(encoded, 'base64'));
  keys.set(secret, key);
  return key;
}

function header(headers: VerifyInput['headers'], name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return typeof value === 'string' ? value : value?.[0];
  }
  return undefined;
}
