/**
 * The owner's session on /account (DESIGN G): a cookie holding the user number and an expiry,
 * signed with a key every node shares, so any node accepts it and nothing is stored. HttpOnly,
 * SameSite=Lax, Secure when the deployment is reached over https.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SESSION_COOKIE = 'owner_session';
/** A random id set before sign-in, which the sign-in form's CSRF token is bound to. */
export const PRE_SESSION_COOKIE = 'owner_pre';
const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

function sign(key: string, value: string): string {
  return createHmac('sha256', key).update(`session:${value}`).digest('base64url');
}

export function newSession(key: string, userNumber: string, now: number): string {
  const value = `${userNumber}.${Math.floor(now + SESSION_TTL_MS)}`;
  return `${value}.${sign(key, value)}`;
}

/** The session's user, when its signature holds and it has not expired. */
export function sessionUser(key: string, cookie: string | undefined, now: number): string | undefined {
  if (!cookie) return undefined;
  const cut = cookie.lastIndexOf('.');
  const value = cookie.slice(0, cut);
  const expected = Buffer.from(sign(key, value));
  const given = Buffer.from(cookie.slice(cut + 1));
  if (cut < 0 || expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
  const dot = value.lastIndexOf('.');
  const expiresAt = Number(value.slice(dot + 1));
  return expiresAt > now ? value.slice(0, dot) : undefined;
}

export function readCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    try {
      cookies.set(part.slice(0, eq).trim(), decodeURIComponent(part.slice(eq + 1).trim()));
    } catch {
      // A malformed cookie is no cookie.
    }
  }
  return cookies;
}

export function cookie(name: string, value: string, options: { secure: boolean; maxAgeSeconds?: number }): string {
  const parts = [`${name}=${encodeURIComponent(value)}`, 'Path=/', 'HttpOnly', 'SameSite=Lax'];
  if (options.secure) parts.push('Secure');
  if (options.maxAgeSeconds !== undefined) parts.push(`Max-Age=${options.maxAgeSeconds}`);
  return parts.join('; ');
}
