/**
 * DESIGN G with a real OAuth client (openid-client) against the app listening on an ephemeral port:
 * the code flow with PKCE, refresh with rotation, a replayed refresh token or code revoking the grant
 * and with it the owner's link, revocation, and the refusals the RFCs prescribe; the partner interface takes the tokens with their
 * scopes and sees only the devices the owner shared.
 */
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { hashSecret } from '../../src/ids.js';
import { demoCountry } from '../../src/regions.js';
import { testApp } from '../helpers/app.js';
import { OwnerAgent } from '../helpers/owner-agent.js';
import { codeFlow as flow, EMAIL, linkWorld, PASSWORD, partner as call, tokenRequest as tokens_, type Setup } from './fixture.js';

let s: Setup;
beforeAll(async () => {
  s = await linkWorld();
}, 60_000);
afterAll(() => s?.test.close());

const codeFlow = (scope: string, share: 'all' | string[]) => flow(s, scope, share);
const partner = (method: 'GET' | 'POST' | 'DELETE', url: string, token: string, payload?: unknown) => call(s, method, url, token, payload);
const tokenRequest = (form: Record<string, string>, secret?: string) => tokens_(s, form, secret);

/** An authorization request of the fixture's service for `scope`, with a fresh PKCE challenge. */
async function authorizationUrl(redirectUri = s.redirectUri, scope = 'devices'): Promise<string> {
  const challenge = await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier());
  return client.buildAuthorizationUrl(s.config, { redirect_uri: redirectUri, scope, state: 'st', code_challenge: challenge, code_challenge_method: 'S256' }).href;
}

describe('the authorization server metadata (RFC 8414)', () => {
  it('names the endpoints, PKCE S256, the grants and the scopes', async () => {
    const metadata = s.config.serverMetadata();
    expect(metadata.issuer).toBe(s.base);
    expect(metadata.authorization_endpoint).toBe(`${s.base}/oauth/authorize`);
    expect(metadata.token_endpoint).toBe(`${s.base}/oauth/token`);
    expect(metadata.revocation_endpoint).toBe(`${s.base}/oauth/revoke`);
    expect(metadata.device_authorization_endpoint).toBe(`${s.base}/oauth/device_authorization`);
    expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
    expect(metadata.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code']));
    expect(metadata.scopes_supported).toEqual(expect.arrayContaining(['devices', 'control', 'push', 'events']));
  });

  it('offers no OpenID Connect logout: its sign-out would revoke every grant of the browser, unlinking the owner', async () => {
    expect(s.config.serverMetadata().end_session_endpoint).toBeUndefined();
    const logout = await fetch(`${s.base}/oauth/logout`);
    expect(logout.status).toBe(404);
  });

  it('behind the TLS proxy (DESIGN A.1), names the issuer as it names the endpoints: by the forwarded origin', async () => {
    const proxied = await testApp();
    try {
      const res = await proxied.app.inject({
        url: '/.well-known/oauth-authorization-server',
        headers: { host: '10.0.0.5:8080', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'kic-qa-ext.example.com' },
      });
      const metadata = res.json();
      expect(metadata.issuer).toBe('https://kic-qa-ext.example.com');
      expect(metadata.token_endpoint).toBe('https://kic-qa-ext.example.com/oauth/token');
    } finally {
      await proxied.close();
    }
  });

  it('in phase OP without PUBLIC_URL, names the deployment\'s base URL: the first request cannot choose the issuer', async () => {
    const op = await testApp({ settings: { PHASE: 'OP', REGION: 'EIC', DOMAIN: 'appliances.example.net' } });
    try {
      const forged = { host: '10.0.0.5:8080', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'attacker.example' };
      const first = (await op.app.inject({ url: '/.well-known/oauth-authorization-server', headers: forged })).json();
      expect(first.issuer).toBe('https://eic-ext.appliances.example.net');
      const proxied = { host: '10.0.0.5:8080', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'eic-ext.appliances.example.net' };
      const next = (await op.app.inject({ url: '/.well-known/oauth-authorization-server', headers: proxied })).json();
      expect([next.issuer, next.token_endpoint]).toEqual(['https://eic-ext.appliances.example.net', 'https://eic-ext.appliances.example.net/oauth/token']);
    } finally {
      await op.close();
    }
  });
});

/**
 * The owner's consent is gone with its grant (DESIGN G, J): /account lists the service no more, and
 * the pair's subscriptions went as by DELETE /user/service, so no message about the devices follows.
 */
async function expectUnlinked(): Promise<void> {
  const { store, owners } = s.test.ctx;
  expect(await store.getDeviceShare(s.serviceId, s.userNumber)).toBeUndefined();
  expect(await store.getConnection(s.serviceId, s.userNumber)).toBeUndefined();
  expect(await store.listPushSubscriptions(s.serviceId, s.userNumber)).toEqual([]);
  expect((await owners.links(s.userNumber)).map((link) => link.service.serviceId)).not.toContain(s.serviceId);
}

describe('the code flow with PKCE', () => {
  it('gives tokens whose scopes and shared devices the partner interface enforces', async () => {
    const { callback, verifier, state } = await codeFlow('devices push', [s.washer]);
    const tokens = await client.authorizationCodeGrant(s.config, new URL(callback), { pkceCodeVerifier: verifier, expectedState: state });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.scope?.split(' ').sort()).toEqual(['devices', 'push']);
    expect(tokens.refresh_token).toBeDefined();

    const list = await partner('GET', '/devices', tokens.access_token);
    expect(list.statusCode).toBe(200);
    expect(list.json().response.map((d: { deviceId: string }) => d.deviceId)).toEqual([s.washer]);
    // The fridge was not shared: it does not exist for the service.
    expect((await partner('GET', `/devices/${s.fridge}`, tokens.access_token)).json().error.code).toBe('1205');
    expect((await partner('GET', `/devices/${s.washer}`, tokens.access_token)).statusCode).toBe(200);

    const control = await partner('POST', `/devices/${s.washer}`, tokens.access_token, { operation: { washerOperationMode: 'STOP' } });
    expect(control.statusCode).toBe(401);
    expect(control.json().error).toMatchObject({ code: '1308' });
    expect(control.json().error.message).toMatch(/no control authority.*control/);
    const events = await partner('POST', `/event/${s.washer}`, tokens.access_token);
    expect(events.json().error.code).toBe('1308');
    expect(events.json().error.message).toContain('events');
    expect((await partner('POST', `/push/${s.washer}`, tokens.access_token)).statusCode).toBe(200);
    expect((await partner('GET', '/users', tokens.access_token)).json().response).toEqual({ userNumber: s.userNumber });
  });

  it('asks each partner route for the scope DESIGN G gives it, and GET /users for none', async () => {
    const { callback, verifier, state } = await codeFlow('control', [s.washer]);
    const tokens = await client.authorizationCodeGrant(s.config, new URL(callback), { pkceCodeVerifier: verifier, expectedState: state });
    /** The scope a 1308 answer names as missing; null when the route let the token through its scope check. */
    const missingScope = async (method: 'GET' | 'POST' | 'DELETE', url: string) => {
      const { error } = (await partner(method, url, tokens.access_token)).json();
      return error?.code === '1308' ? (/do not include (\w+)/.exec(error.message)?.[1] ?? error.message) : null;
    };
    const routes: ['GET' | 'POST' | 'DELETE', string, string | null][] = [
      ['GET', '/devices', 'devices'],
      ['GET', `/devices/profile/${s.washer}`, 'devices'],
      ['GET', `/devices/${s.washer}`, 'devices'],
      ['POST', `/devices/${s.washer}`, null],
      ['GET', '/push', 'push'],
      ['POST', `/push/${s.washer}`, 'push'],
      ['DELETE', `/push/${s.washer}`, 'push'],
      ['GET', '/event', 'events'],
      ['POST', `/event/${s.washer}`, 'events'],
      ['DELETE', `/event/${s.washer}`, 'events'],
      ['GET', '/users', null],
    ];
    for (const [method, url, scope] of routes) expect([method, url, await missingScope(method, url)]).toEqual([method, url, scope]);
  });

  it('rotates refresh tokens; a used one coming back revokes the whole grant, which unlinks the pair', async () => {
    const { callback, verifier, state } = await codeFlow('devices push', 'all');
    const first = await client.authorizationCodeGrant(s.config, new URL(callback), { pkceCodeVerifier: verifier, expectedState: state });
    const list = await partner('GET', '/devices', first.access_token);
    expect(list.json().response.map((d: { deviceId: string }) => d.deviceId).sort()).toEqual([s.washer, s.fridge].sort());
    expect((await partner('POST', `/push/${s.fridge}`, first.access_token)).statusCode).toBe(200);

    const second = await client.refreshTokenGrant(s.config, first.refresh_token!);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect((await partner('GET', '/devices', second.access_token)).statusCode).toBe(200);

    await expect(client.refreshTokenGrant(s.config, first.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await partner('GET', '/devices', second.access_token)).json().error.code).toBe('1103');
    await expect(client.refreshTokenGrant(s.config, second.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expectUnlinked();
  });

  it('a code used twice revokes the grant it gave (RFC 6749 4.1.2), which unlinks the pair', async () => {
    const { callback, verifier, state } = await codeFlow('devices', 'all');
    const tokens = await client.authorizationCodeGrant(s.config, new URL(callback), { pkceCodeVerifier: verifier, expectedState: state });
    await expect(client.authorizationCodeGrant(s.config, new URL(callback), { pkceCodeVerifier: verifier, expectedState: state })).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await partner('GET', '/devices', tokens.access_token)).json().error.code).toBe('1103');
    await expectUnlinked();
  });

  it('a code exchanged twice at once gives tokens at most once, and the second exchange revokes the grant', async () => {
    const { callback, verifier } = await codeFlow('devices', 'all');
    const code = new URL(callback).searchParams.get('code')!;
    const form = { grant_type: 'authorization_code', code, redirect_uri: s.redirectUri, code_verifier: verifier };
    const answers = await Promise.all([tokenRequest(form), tokenRequest(form)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400]);
    expect(answers.find((a) => a.status === 400)!.body.error).toBe('invalid_grant');
    await expectUnlinked();
  });

  it('a refresh token used twice at once gives tokens at most once, and the second use revokes the grant', async () => {
    const { callback, verifier, state } = await codeFlow('devices', 'all');
    const first = await client.authorizationCodeGrant(s.config, new URL(callback), { pkceCodeVerifier: verifier, expectedState: state });
    const form = { grant_type: 'refresh_token', refresh_token: first.refresh_token! };
    const answers = await Promise.all([tokenRequest(form), tokenRequest(form)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400]);
    expect(answers.find((a) => a.status === 400)!.body.error).toBe('invalid_grant');
    await expectUnlinked();
  });

  it('revokes an access token (RFC 7009)', async () => {
    const { callback, verifier, state } = await codeFlow('devices', 'all');
    const tokens = await client.authorizationCodeGrant(s.config, new URL(callback), { pkceCodeVerifier: verifier, expectedState: state });
    await client.tokenRevocation(s.config, tokens.access_token);
    expect((await partner('GET', '/devices', tokens.access_token)).json().error.code).toBe('1103');
    expect(await s.test.ctx.store.getDeviceShare(s.serviceId, s.userNumber)).toBeDefined();
    await client.tokenRevocation(s.config, tokens.refresh_token!);
    await expect(client.refreshTokenGrant(s.config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    // A refresh token revoked revokes its grant (oidc-provider), and so the consent it stood for.
    await expectUnlinked();
  });
});

describe('what the RFCs refuse', () => {
  it('an unregistered redirect_uri: an error page, never a redirect to it', async () => {
    const url = await authorizationUrl(`${s.base}/elsewhere`);
    const page = await new OwnerAgent(s.base).follow(url);
    expect(page.status).toBe(400);
    expect(page.html).toContain('redirect_uri');
  });

  it('a client_id with NUL, which no service has: invalid_client and an error page, not a server error', async () => {
    const token = await fetch(`${s.base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: 'svc\u0000', client_secret: 'x', grant_type: 'refresh_token', refresh_token: 'x' }).toString(),
    });
    expect([token.status, ((await token.json()) as { error: string }).error]).toEqual([401, 'invalid_client']);
    const page = await new OwnerAgent(s.base).follow(`${s.base}/oauth/authorize?client_id=svc%00&response_type=code&scope=devices`);
    expect(page.status).toBe(400);
    expect(page.html).toContain('invalid_client');
  });

  it('an authorization request without a PKCE challenge', async () => {
    const url = client.buildAuthorizationUrl(s.config, { redirect_uri: s.redirectUri, scope: 'devices', state: 'x' });
    const back = await new OwnerAgent(s.base).follow(url.href);
    expect(new URL(back.url).searchParams.get('error')).toBe('invalid_request');
  });

  it('a code without its verifier, with a wrong one, with a wrong secret, or expired', async () => {
    const { callback } = await codeFlow('devices', 'all');
    const code = new URL(callback).searchParams.get('code')!;
    const exchange = { grant_type: 'authorization_code', code, redirect_uri: s.redirectUri };
    const wrongSecret = await tokenRequest({ ...exchange, code_verifier: client.randomPKCECodeVerifier() }, 'not-the-key');
    expect(wrongSecret).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    expect(await tokenRequest(exchange)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

    const second = await codeFlow('devices', 'all');
    const secondCode = new URL(second.callback).searchParams.get('code')!;
    const wrongVerifier = await tokenRequest({ grant_type: 'authorization_code', code: secondCode, redirect_uri: s.redirectUri, code_verifier: client.randomPKCECodeVerifier() });
    expect(wrongVerifier).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

    const third = await codeFlow('devices', 'all');
    const thirdCode = new URL(third.callback).searchParams.get('code')!;
    // Its record expires (60 s in life): the store's copy is made to have expired.
    const { store } = s.test.ctx;
    const record = (await store.findOAuthRecord('AuthorizationCode', hashSecret(thirdCode), Date.now()))!;
    await store.saveOAuthRecord({ ...record, expiresAt: Date.now() - 1 });
    const expired = await tokenRequest({ grant_type: 'authorization_code', code: thirdCode, redirect_uri: s.redirectUri, code_verifier: third.verifier });
    expect(expired).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });
});

describe('a consent refused for its choice of devices', () => {
  it('grants nothing: the next authorization for the same scopes asks for consent again', async () => {
    const agent = new OwnerAgent(s.base);
    const signIn = await agent.follow(await authorizationUrl());
    const consentPage = await agent.submit(signIn, /\/login$/, { email: EMAIL, password: PASSWORD });
    expect(new URL((await agent.submit(consentPage, /\/consent$/, { share: 'all' })).url).searchParams.get('code')).toBeTruthy();

    // The oven is not of a type the service may be given: the page says so.
    const widening = await agent.follow(await authorizationUrl(s.redirectUri, 'devices control'));
    expect(widening.html).toContain('Laundry Pal asks to link your appliances');
    const refused = await agent.submit(widening, /\/consent$/, { share: 'chosen', device: [s.oven] });
    expect(refused.html).toContain('cannot be shared with Laundry Pal');

    const again = await agent.follow(await authorizationUrl(s.redirectUri, 'devices control'));
    expect(again.html).toContain('Laundry Pal asks to link your appliances');
  });
});

describe('a browser still signed in as an owner who was deleted since', () => {
  it('is asked to sign in again, by the authorization and by /account, and links whoever signs in', async () => {
    const { ctx } = s.test;
    const gone = await ctx.owners.createUser(demoCountry(ctx.config.region), { email: 'gone@example.com', password: PASSWORD });
    const agent = new OwnerAgent(s.base);
    // Signed in both ways: to /account, then by the authorization's session, which that sign-in opened.
    const accountSignIn = await agent.follow('/account');
    expect((await agent.submit(accountSignIn, /sign-in$/, { email: 'gone@example.com', password: PASSWORD })).html).toContain('Linked services');
    const consentPage = await agent.follow(await authorizationUrl());
    expect(new URL((await agent.submit(consentPage, /\/consent$/, { share: 'all' })).url).searchParams.get('code')).toBeTruthy();

    await ctx.accounts.deleteUser(gone.userNumber);

    expect((await agent.follow('/account')).html).toContain('Sign in to your account');
    const again = await agent.follow(await authorizationUrl());
    expect(again.status).toBe(200);
    expect(again.html).toContain('Sign in to link your appliances to Laundry Pal');
    // oidc-provider ends the stale session by a form its page posts at once, as a browser does.
    const switching = await agent.submit(again, /\/login$/, { email: EMAIL, password: PASSWORD });
    const logout = Object.fromEntries([...switching.html.matchAll(/<input type="hidden" name="(\w+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
    const consentAgain = await agent.follow(/action="([^"]+)"/.exec(switching.html)![1]!, { form: logout });
    expect(consentAgain.html).toContain('Laundry Pal asks to link your appliances');
  });
});

describe('the owner\'s session at the authorization server', () => {
  it('is a cookie with HttpOnly and SameSite=Lax (DESIGN G), with no SameSite=None twin', async () => {
    const agent = new OwnerAgent(s.base);
    const requests = vi.spyOn(agent, 'request');
    const url = await authorizationUrl();
    const signIn = await agent.follow(url);
    const consentPage = await agent.submit(signIn, /\/login$/, { email: EMAIL, password: PASSWORD });
    await agent.submit(consentPage, /\/consent$/, { share: 'all' });
    const responses = await Promise.all(requests.mock.results.map((result) => result.value as Promise<Response>));
    const cookies = responses.flatMap((response) => response.headers.getSetCookie());
    const sessions = cookies.filter((line) => /^_session[.=]/.test(line));
    expect(sessions.length).toBeGreaterThan(0);
    for (const line of sessions) expect(line).toMatch(/; samesite=lax; httponly/i);
    expect(cookies.filter((line) => line.includes('.legacy'))).toEqual([]);
  });
});

describe('signing out of /account, or another owner signing in there', () => {
  /** A browser that linked the fixture's owner, then opened /account's sign-in form. */
  async function linkedBrowser() {
    const agent = new OwnerAgent(s.base);
    const signIn = await agent.follow(await authorizationUrl());
    const consentPage = await agent.submit(signIn, /\/login$/, { email: EMAIL, password: PASSWORD });
    expect(new URL((await agent.submit(consentPage, /\/consent$/, { share: 'all' })).url).searchParams.get('code')).toBeTruthy();
    return { agent, accountSignIn: await agent.follow('/account') };
  }

  it('ends the authorization server\'s session too: the next authorization asks who signs in', async () => {
    const { agent, accountSignIn } = await linkedBrowser();
    const account = await agent.submit(accountSignIn, /sign-in$/, { email: EMAIL, password: PASSWORD });
    await agent.submit(account, /sign-out$/, {});
    const next = await agent.follow(await authorizationUrl());
    expect(next.status).toBe(200);
    expect(next.html).toContain('Sign in to link your appliances to Laundry Pal');
  });

  it('links the owner signed in last, not the one the authorization server remembered', async () => {
    const { ctx } = s.test;
    await ctx.owners.createUser(demoCountry(ctx.config.region), { email: 'visitor@example.com', password: PASSWORD });
    const { agent, accountSignIn } = await linkedBrowser();
    await agent.submit(accountSignIn, /sign-in$/, { email: 'visitor@example.com', password: PASSWORD });
    const next = await agent.follow(await authorizationUrl());
    expect(next.html).toContain('Laundry Pal asks to link your appliances');
    expect(next.html).toContain('You have no device of these types yet.');
  });
});

describe('a page of an authorization that is over', () => {
  it('says so in a page an owner reads, not in the JSON envelope', async () => {
    const agent = new OwnerAgent(s.base);
    const url = await authorizationUrl();
    const signIn = await agent.follow(url);
    const consentPage = await agent.submit(signIn, /\/login$/, { email: EMAIL, password: PASSWORD });
    expect(new URL((await agent.submit(consentPage, /\/consent$/, { share: 'all' })).url).searchParams.get('code')).toBeTruthy();

    // The back button, then Allow once more; or a page left open past the authorization's hour.
    const again = await agent.submit(consentPage, /\/consent$/, { share: 'all' });
    expect(again.status).toBe(400);
    expect(again.html).toContain('<h1>Link expired</h1>');
    const reopened = await agent.follow(new URL(signIn.url).pathname);
    expect(reopened.status).toBe(400);
    expect(reopened.html).toContain('Go back to the app and start again.');
  });
});

describe('a fault inside the authorization server', () => {
  it('is logged with its cause, not only answered with an error page', async () => {
    const fault = new Error('the store is gone');
    const read = vi.spyOn(s.test.ctx.store, 'getRedirectUris').mockRejectedValueOnce(fault);
    const logged = vi.spyOn(s.test.app.log, 'error');
    try {
      const url = await authorizationUrl();
      const page = await new OwnerAgent(s.base).follow(url);
      expect(page.status).toBe(500);
      expect(logged).toHaveBeenCalledWith({ err: fault }, 'oauth: internal error');
    } finally {
      read.mockRestore();
      logged.mockRestore();
    }
  });
});
