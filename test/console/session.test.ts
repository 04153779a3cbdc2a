/** Console sessions and one-time codes: pure, with the clock passed in. */
import { describe, expect, it } from 'vitest';
import { consoleKeys, decodeSession, encodeSession, newSession, SESSION_TTL_MS, SIGN_IN_CODE_TTL_MS, SignInCodes } from '../../src/console/session.js';

const NOW = Date.UTC(2026, 0, 1) + 0.25;
const keys = consoleKeys('the-admin-token');

describe('session cookies', () => {
  it('reads back what it signed, until it expires', () => {
    const session = newSession(true, NOW);
    const value = encodeSession(keys.session, session);
    expect(decodeSession(keys.session, value, NOW)).toEqual(session);
    expect(decodeSession(keys.session, value, NOW + SESSION_TTL_MS)).toBeNull();
  });

  it('refuses a cookie signed with another admin token, or changed in any part', () => {
    const value = encodeSession(keys.session, newSession(false, NOW));
    expect(decodeSession(consoleKeys('another-token').session, value, NOW)).toBeNull();
    const [id, , expires, mac] = value.split('.');
    expect(decodeSession(keys.session, `${id}.o.${expires}.${mac}`, NOW)).toBeNull();
    expect(decodeSession(keys.session, `${id}.v.${Number(expires) + 1000}.${mac}`, NOW)).toBeNull();
    for (const junk of [undefined, '', 'a.b.c', 'a.b.c.d.e', '...']) expect(decodeSession(keys.session, junk, NOW)).toBeNull();
  });

  it('refuses, without throwing, a proof of as many characters as a real one but more bytes', () => {
    const [id, , expires, mac] = encodeSession(keys.session, newSession(false, NOW)).split('.') as [string, string, string, string];
    // A raw 0xE9 in the Cookie header reads as one latin1 character, two bytes in UTF-8.
    expect(decodeSession(keys.session, `${id}.v.${expires}.${mac.slice(0, -1)}\u00e9`, NOW)).toBeNull();
  });

  it('derives a different key for each use, none of them the token', () => {
    expect(new Set([keys.session, keys.csrf, 'the-admin-token']).size).toBe(3);
  });
});

describe('one-time sign-in codes', () => {
  it('redeems a code once, within its time', () => {
    const codes = new SignInCodes();
    const code = codes.issue(NOW);
    expect(codes.redeem(code, NOW + 1)).toBe(true);
    expect(codes.redeem(code, NOW + 2)).toBe(false);
    const late = codes.issue(NOW);
    expect(codes.redeem(late, NOW + SIGN_IN_CODE_TTL_MS)).toBe(false);
    expect(codes.redeem('never-issued', NOW)).toBe(false);
  });
});
