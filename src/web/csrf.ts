/**
 * CSRF protection for the server-rendered forms: a token bound to the session it was issued for
 * (an HMAC of the session id under a server key), sent in a hidden field and checked in constant
 * time. Nothing is stored, so a form rendered by one node is accepted by every node with the key.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { html, type Html } from './html.js';

export const CSRF_FIELD = '_csrf';

export function csrfToken(key: string, sessionId: string): string {
  return createHmac('sha256', key).update(`csrf:${sessionId}`).digest('base64url');
}

export function csrfMatches(key: string, sessionId: string, presented: unknown): boolean {
  if (typeof presented !== 'string') return false;
  const expected = Buffer.from(csrfToken(key, sessionId));
  const given = Buffer.from(presented);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The hidden field every form of a session carries. */
export function csrfField(key: string, sessionId: string): Html {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${csrfToken(key, sessionId)}">`;
}
