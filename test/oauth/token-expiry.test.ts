/**
 * DESIGN G: an access token lives ACCESS_TOKEN_TTL seconds. Past it, the partner interface refuses
 * it as any expired token (1103), and the refresh token gives a new one.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import * as client from 'openid-client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { codeFlow, linkWorld, partner, type Setup } from './fixture.js';

let s: Setup;
beforeAll(async () => {
  s = await linkWorld({ ACCESS_TOKEN_TTL: '1' });
}, 60_000);
afterAll(() => s?.test.close());

it('refuses an access token past ACCESS_TOKEN_TTL with 1103, and serves the one its refresh token gives', async () => {
  const { callback, verifier, state } = await codeFlow(s, 'devices', 'all');
  const tokens = await client.authorizationCodeGrant(s.config, new URL(callback), { pkceCodeVerifier: verifier, expectedState: state });
  expect(tokens.expires_in).toBe(1);
  expect((await partner(s, 'GET', '/devices', tokens.access_token)).statusCode).toBe(200);

  await sleep(1100);
  const expired = await partner(s, 'GET', '/devices', tokens.access_token);
  expect([expired.statusCode, expired.json().error.code]).toEqual([401, '1103']);

  const refreshed = await client.refreshTokenGrant(s.config, tokens.refresh_token!);
  expect((await partner(s, 'GET', '/devices', refreshed.access_token)).statusCode).toBe(200);
});
