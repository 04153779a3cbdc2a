/**
 * Console sessions (DESIGN H, cookies as in G): a cookie signed with a key derived from ADMIN_TOKEN,
 * so any node of a deployment reads any node's session and nothing is stored but, for a minute, the
 * message an action leaves for the page after it (Flashes). A visitor gets an anonymous session (for
 * the sign-in form's CSRF token); signing in replaces it with a new one. Changing ADMIN_TOKEN signs
 * everyone out.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { hashSecret, type Clock } from '../ids.js';
import type { OAuthArea } from '../store/areas/oauth.js';
import { overTls } from '../web/forwarded.js';

export const SESSION_COOKIE = 'console_session';
/** An operator's session lasts a working day. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** A one-time sign-in link (printed by the sandbox) works once, within this long. */
export const SIGN_IN_CODE_TTL_MS = 30 * 60 * 1000;

/** A flash waits this long for its page: the browser asks for it at once, following the 303. */
export const FLASH_TTL_MS = 60_000;
const FLASH = 'ConsoleFlash';

export interface Session {
  id: string;
  /** Signed in with the admin token (else a visitor on the sign-in page). */
  operator: boolean;
  expiresAt: number;
}

export interface ConsoleKeys {
  session: string;
  csrf: string;
}

/** Keys of their own for each use, so a cookie's MAC says nothing of the admin token or of CSRF tokens. */
export function consoleKeys(adminToken: string): ConsoleKeys {
  const derive = (use: string) => createHmac('sha256', adminToken).update(`appliance-cloud console ${use}`).digest('base64url');
  return { session: derive('session'), csrf: derive('csrf') };
}

function mac(key: string, payload: string): string {
  return createHmac('sha256', key).update(payload).digest('base64url');
}

export function newSession(operator: boolean, now: number): Session {
  return { id: randomBytes(18).toString('base64url'), operator, expiresAt: Math.floor(now + SESSION_TTL_MS) };
}

/** `<id>.<o|v>.<expiresAt>.<mac>` */
export function encodeSession(key: string, session: Session): string {
  const payload = `${session.id}.${session.operator ? 'o' : 'v'}.${session.expiresAt}`;
  return `${payload}.${mac(key, payload)}`;
}

/** The session a cookie value proves, or null when it is malformed, forged or expired. */
export function decodeSession(key: string, value: string | undefined, now: number): Session | null {
  const parts = value?.split('.');
  if (parts?.length !== 4) return null;
  const [id, role, expires, given] = parts as [string, string, string, string];
  const expected = Buffer.from(mac(key, `${id}.${role}.${expires}`));
  // Bytes, not characters: a cookie may carry any byte, and timingSafeEqual throws on unequal lengths.
  const proof = Buffer.from(given);
  if (proof.length !== expected.length || !timingSafeEqual(proof, expected)) return null;
  const expiresAt = Number(expires);
  if (!(expiresAt > now) || (role !== 'o' && role !== 'v')) return null;
  return { id, operator: role === 'o', expiresAt };
}

/** One cookie of the request's Cookie header. */
export function readCookie(request: FastifyRequest, name: string): string | undefined {
  for (const pair of (request.headers.cookie ?? '').split(';')) {
    const at = pair.indexOf('=');
    if (at > 0 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return undefined;
}

/** Secure behind the TLS-terminating proxy of DESIGN A.1, read as the owner pages read it (G). */
export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, value: string, maxAgeMs: number, publicUrl: string | null): void {
  const attributes = [`${SESSION_COOKIE}=${value}`, 'Path=/console', 'HttpOnly', 'SameSite=Lax', `Max-Age=${Math.max(0, Math.floor(maxAgeMs / 1000))}`];
  if (overTls(request, publicUrl)) attributes.push('Secure');
  reply.header('set-cookie', attributes.join('; '));
}

/**
 * One-time sign-in codes, kept by the process that issued them (the sandbox prints one at start and
 * serves it itself): each becomes a session once, within SIGN_IN_CODE_TTL_MS.
 */
export class SignInCodes {
  readonly #expiry = new Map<string, number>();

  issue(now: number): string {
    this.#forgetExpired(now);
    const code = randomBytes(24).toString('base64url');
    this.#expiry.set(code, now + SIGN_IN_CODE_TTL_MS);
    return code;
  }

  /** true once for a code issued here and not expired; it is spent either way. */
  redeem(code: string, now: number): boolean {
    const expiresAt = this.#expiry.get(code);
    this.#expiry.delete(code);
    return expiresAt !== undefined && expiresAt > now;
  }

  #forgetExpired(now: number): void {
    for (const [code, expiresAt] of this.#expiry) if (expiresAt <= now) this.#expiry.delete(code);
  }
}

/** The store's short-lived records (the OAuth area's, swept once expired), which flashes are kept in. */
export type FlashStore = Pick<OAuthArea, 'saveOAuthRecord' | 'findOAuthRecord' | 'consumeOAuthRecord' | 'destroyOAuthRecord'>;

/**
 * One-time messages of a session (Post/Redirect/Get): a console action leaves what it came to, the
 * page it redirects to takes it. In the store, as the cookie holds nothing but the session and the
 * redirected GET may reach another node (DESIGN F); never in the URL, as one holds a new webhook secret.
 */
export class Flashes {
  constructor(
    private readonly store: FlashStore,
    private readonly clock: Clock,
  ) {}

  /** Leaves `message` for the session's next page, replacing one not taken yet. */
  async leave(sessionId: string, message: string): Promise<void> {
    await this.store.saveOAuthRecord({
      model: FLASH,
      key: hashSecret(sessionId),
      payload: JSON.stringify(message),
      grantId: null,
      userCode: null,
      uid: null,
      expiresAt: this.clock.now() + FLASH_TTL_MS,
      consumedAt: null,
    });
  }

  /** The session's message, once: of pages asking at the same time, only the one that consumes it shows it. */
  async take(sessionId: string): Promise<string | null> {
    const key = hashSecret(sessionId);
    const now = this.clock.now();
    const record = await this.store.findOAuthRecord(FLASH, key, now);
    if (!record || !(await this.store.consumeOAuthRecord(FLASH, key, now))) return null;
    await this.store.destroyOAuthRecord(FLASH, key);
    return JSON.parse(record.payload) as string;
  }
}
