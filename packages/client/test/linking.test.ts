/**
 * The SDK's OAuth helpers against a real sandbox process (DESIGN G): the demo owner signs in and
 * consents on the server's pages (over plain HTTP with cookies, as a browser would), the helpers
 * exchange, refresh with rotation through a TokenStore and poll the device grant, and the client
 * calls the partner interface with those tokens until they are revoked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OwnerAgent } from '../../../test/helpers/owner-agent.js';
import { ApplianceCloudError, oauth } from '@appliance-cloud/client';
import { startSandbox, type Sandbox } from './sandbox.js';

// Nothing listens there: the owner's browser is sent back to it, and the test reads the URL.
const REDIRECT_URI = 'http://127.0.0.1:9/callback';

let sandbox: Sandbox;
let metadata: oauth.AuthorizationServerMetadata;
let client: oauth.OAuthClient;

beforeAll(async () => {
  sandbox = await startSandbox();
  await sandbox.admin('PATCH', `/admin/services/${sandbox.credentials.serviceId}`, { redirectUris: [REDIRECT_URI] });
  metadata = await oauth.discover(sandbox.url);
  client = { clientId: sandbox.credentials.serviceId, clientSecret: sandbox.credentials.serviceKey };
}, 60_000);
afterAll(() => sandbox?.stop());

/** A TokenStore in memory, recording every save. */
function memoryStore(initial: oauth.TokenSet) {
  const saved: oauth.TokenSet[] = [];
  let current = initial;
  const store: oauth.TokenStore = {
    load: async () => current,
    save: async (tokens) => void saved.push((current = tokens)),
  };
  return { store, saved };
}

/** The owner signs in on the page `page` leads to and shares `share`; returns the page the consent ends on. */
async function signInAndConsent(agent: OwnerAgent, page: { url: string; html: string }, share: 'all' | string[]) {
  const consentPage = await agent.submit(page, /\/login$/, sandbox.owner);
  expect(consentPage.html).toContain('asks to link your appliances');
  return agent.submit(consentPage, /\/consent$/, share === 'all' ? { share: 'all' } : { share: 'chosen', device: share });
}

async function linkWithCode(scope: oauth.Scope[], share: 'all' | string[]) {
  const pkce = await oauth.createPkce();
  const state = oauth.randomState();
  const url = oauth.authorizationUrl(metadata, { clientId: client.clientId, redirectUri: REDIRECT_URI, scope, state, codeChallenge: pkce.challenge });
  const agent = new OwnerAgent(sandbox.url);
  const back = new URL((await signInAndConsent(agent, await agent.follow(url), share)).url);
  expect(back.origin + back.pathname).toBe(REDIRECT_URI);
  expect(back.searchParams.get('state')).toBe(state);
  return oauth.exchangeCode(metadata, client, { code: back.searchParams.get('code')!, redirectUri: REDIRECT_URI, codeVerifier: pkce.verifier });
}

describe('the authorization code flow with PKCE', () => {
  it('links the demo owner; the refreshing provider rotates through its store; the client sees what was shared', async () => {
    expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
    const fridge = sandbox.deviceOf('DEVICE_REFRIGERATOR');
    const tokens = await linkWithCode(['devices', 'control'], [fridge]);
    expect(tokens).toMatchObject({ tokenType: 'Bearer', refreshToken: expect.any(String) });
    expect(tokens.scope?.split(' ').sort()).toEqual(['control', 'devices']);

    const { store, saved } = memoryStore(tokens);
    // An hour later: the access token is about to expire, so the provider refreshes before the call.
    let now = Date.now() + 3600_000;
    const provider = oauth.refreshingTokenProvider({ metadata, client, store, now: () => now });
    const app = sandbox.client({ tokenProvider: provider });
    expect((await app.listDevices()).map((d) => d.deviceId)).toEqual([fridge]);
    expect(saved).toHaveLength(1);
    expect(saved[0]!.refreshToken).not.toBe(tokens.refreshToken);
    expect(saved[0]!.accessToken).not.toBe(tokens.accessToken);

    // Still valid: no new refresh. The scopes hold: control is granted, push is not.
    now = Date.now();
    await app.device('DEVICE_REFRIGERATOR', fridge).control({ temperatureInUnits: { locationName: 'FRIDGE', targetTemperatureC: 5 } });
    await expect(app.subscribePush(fridge)).rejects.toMatchObject({ code: '1308', httpStatus: 401 });
    expect(saved).toHaveLength(1);

    // The washer was not shared: it does not exist for the service.
    await expect(app.getStatus(sandbox.deviceOf('DEVICE_WASHER'))).rejects.toMatchObject({ code: '1205' });

    // The spent refresh token presented again revokes the whole grant (OAuth 2.1).
    await expect(oauth.refreshTokens(metadata, client, tokens.refreshToken!)).rejects.toMatchObject({ name: 'OAuthError', error: 'invalid_grant' });
    const refused = await app.listDevices().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApplianceCloudError);
    expect(refused).toMatchObject({ code: '1103', httpStatus: 401 });
  }, 30_000);

  it('unlinking (DELETE /user/service) gives 1202 to the grant\'s tokens and stops its refresh token', async () => {
    const tokens = await linkWithCode(['devices'], 'all');
    const app = sandbox.client({ accessToken: tokens.accessToken });
    expect((await app.listDevices()).length).toBe(sandbox.devices.length);
    await app.disconnectUser();
    await expect(app.listDevices()).rejects.toMatchObject({ code: '1202' });
    await expect(oauth.refreshTokens(metadata, client, tokens.refreshToken!)).rejects.toMatchObject({ error: 'invalid_grant' });
  }, 30_000);
});

describe('the device authorization grant', () => {
  it('links through the code the owner types on /device; a revoked access token answers 1103', async () => {
    const fridge = sandbox.deviceOf('DEVICE_REFRIGERATOR');
    const started = await oauth.startDeviceAuthorization(metadata, client, ['devices', 'push']);
    expect(started.verificationUri).toBe(`${sandbox.url}/oauth/device`);
    expect(started.userCode).toMatch(/^[A-Z]{4}-[A-Z]{4}$/);
    const polled = oauth.pollDeviceToken(metadata, client, started);

    const agent = new OwnerAgent(sandbox.url);
    const entry = await agent.follow(started.verificationUri);
    const confirm = await agent.submit(entry, /\/oauth\/device$/, { user_code: started.userCode });
    const signIn = await agent.submit(confirm, /\/oauth\/device$/, {}, { confirm: 'yes' });
    expect((await signInAndConsent(agent, signIn, [fridge])).html).toContain('is linked to your appliances');

    const tokens = await polled;
    expect(tokens.scope?.split(' ').sort()).toEqual(['devices', 'push']);
    const app = sandbox.client({ accessToken: tokens.accessToken });
    expect((await app.listDevices()).map((d) => d.deviceId)).toEqual([fridge]);
    await app.subscribePush(fridge);

    await oauth.revokeToken(metadata, client, tokens.accessToken, 'access_token');
    await expect(app.listDevices()).rejects.toMatchObject({ name: 'ApplianceCloudError', code: '1103', httpStatus: 401 });
  }, 30_000);
});
