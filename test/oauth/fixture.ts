/**
 * A deployment listening on an ephemeral port with a service (an OAuth client with a redirect URI),
 * an owner with a login and three devices (two of the service's allowed types), an openid-client
 * configuration for the service, and the steps an owner and a partner take.
 */
import type { AddressInfo } from 'node:net';
import * as client from 'openid-client';
import { expect } from 'vitest';
import type { Settings } from '../../src/config.js';
import { newMessageId } from '../../src/ids.js';
import { demoCountry } from '../../src/regions.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { OwnerAgent } from '../helpers/owner-agent.js';

export const EMAIL = 'owner@example.com';
export const PASSWORD = 'correct horse battery';

export interface Setup {
  test: TestApp;
  base: string;
  redirectUri: string;
  serviceId: string;
  serviceKey: string;
  userNumber: string;
  washer: string;
  fridge: string;
  oven: string;
  config: client.Configuration;
}

/** Builds the deployment, with `settings` (ACCESS_TOKEN_TTL…); close it with `setup.test.close()`. */
export async function linkWorld(settings: Settings = {}): Promise<Setup> {
  const test = await testApp({ settings });
  await test.app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(test.app.server.address() as AddressInfo).port}`;
  const redirectUri = `${base}/partner/callback`;
  const { ctx } = test;
  const { service, serviceKey } = await ctx.accounts.createService({
    name: 'Laundry Pal',
    allowedDevices: ['DEVICE_WASHER', 'DEVICE_REFRIGERATOR'],
    redirectUris: [redirectUri],
  });
  const user = await ctx.owners.createUser(demoCountry(ctx.config.region), { email: EMAIL, password: PASSWORD });
  const register = async (deviceType: string, alias: string) => (await ctx.devices.register(user.userNumber, { deviceType, alias, virtual: true })).device.deviceId;
  const washer = await register('DEVICE_WASHER', 'Washer');
  const fridge = await register('DEVICE_REFRIGERATOR', 'Fridge');
  const oven = await register('DEVICE_OVEN', 'Oven');
  const config = await client.discovery(new URL(base), service.serviceId, undefined, client.ClientSecretBasic(serviceKey), {
    algorithm: 'oauth2',
    execute: [client.allowInsecureRequests],
  });
  return { test, base, redirectUri, serviceId: service.serviceId, serviceKey, userNumber: user.userNumber, washer, fridge, oven, config };
}

/** Signs in and consents on the pages as an owner would; returns where the server sent the browser back. */
export async function consent(s: Setup, authorizationUrl: URL, share: 'all' | string[]): Promise<string> {
  const agent = new OwnerAgent(s.base);
  const signIn = await agent.follow(authorizationUrl.href);
  expect(signIn.html).toContain('Sign in to link your appliances to Laundry Pal');
  const consentPage = await agent.submit(signIn, /\/login$/, { email: EMAIL, password: PASSWORD });
  expect(consentPage.html).toContain('Laundry Pal asks to link your appliances');
  const back = await agent.submit(consentPage, /\/consent$/, share === 'all' ? { share: 'all' } : { share: 'chosen', device: share });
  return back.url;
}

/** An authorization request of the service for `scope`, with a fresh PKCE verifier and `state`. */
export async function authorizationRequest(s: Setup, scope: string, state = client.randomState()): Promise<{ url: URL; verifier: string; state: string }> {
  const verifier = client.randomPKCECodeVerifier();
  const url = client.buildAuthorizationUrl(s.config, {
    redirect_uri: s.redirectUri,
    scope,
    state,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  return { url, verifier, state };
}

/** An authorization request with PKCE, consented to; the callback URL with its code, the verifier and the state. */
export async function codeFlow(s: Setup, scope: string, share: 'all' | string[]) {
  const { url, verifier, state } = await authorizationRequest(s, scope);
  const callback = await consent(s, url, share);
  return { callback, verifier, state };
}

/** A partner call with the service's credentials and `token`. */
export function partner(s: Setup, method: 'GET' | 'POST' | 'DELETE', url: string, token: string, payload?: unknown) {
  return s.test.app.inject({
    method,
    url,
    headers: {
      authorization: `Bearer ${token}`,
      'x-country-code': demoCountry(s.test.ctx.config.region),
      'x-message-id': newMessageId(),
      'x-service-id': s.serviceId,
      'x-service-key': s.serviceKey,
      ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
  });
}

/** POSTs a form to the token endpoint as a client would, for the refusals openid-client will not send. */
export async function tokenRequest(s: Setup, form: Record<string, string>, secret = s.serviceKey) {
  const response = await fetch(`${s.base}/oauth/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${s.serviceId}:${secret}`).toString('base64')}`,
    },
    body: new URLSearchParams(form).toString(),
  });
  return { status: response.status, body: (await response.json()) as { error?: string } };
}
