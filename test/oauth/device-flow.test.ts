/**
 * DESIGN G, continued: the device authorization grant (RFC 8628) through the /device page; a
 * narrower consent silencing messages about the devices no longer shared, at production time
 * (DESIGN J); and unlinking, after which the service's tokens answer 1202.
 */
import * as client from 'openid-client';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { OwnerAgent } from '../helpers/owner-agent.js';
import { DEVICE_CODE_GRANT } from '../../src/oauth/adapter.js';
import { codeFlow, EMAIL, linkWorld, partner, PASSWORD, tokenRequest, type Setup } from './fixture.js';

let s: Setup;
beforeAll(async () => {
  s = await linkWorld();
}, 60_000);
afterAll(() => s?.test.close());

const ids = (body: { response: { deviceId: string }[] | null }) => (body.response ?? []).map((d) => d.deviceId).sort();

async function link(scope: string, share: 'all' | string[]) {
  const { callback, verifier, state } = await codeFlow(s, scope, share);
  return client.authorizationCodeGrant(s.config, new URL(callback), { pkceCodeVerifier: verifier, expectedState: state });
}

describe('the device authorization grant', () => {
  it('links through the code the owner types on /device', async () => {
    const started = await client.initiateDeviceAuthorization(s.config, { scope: 'devices control' });
    expect(started.verification_uri).toBe(`${s.base}/oauth/device`);

    const agent = new OwnerAgent(s.base);
    const entry = await agent.follow('/device');
    expect(entry.html).toContain('<label for="user_code">');
    const confirm = await agent.submit(entry, /\/oauth\/device$/, { user_code: started.user_code });
    expect(confirm.html).toContain('Link Laundry Pal?');
    const signIn = await agent.submit(confirm, /\/oauth\/device$/, {}, { confirm: 'yes' });
    const consentPage = await agent.submit(signIn, /\/login$/, { email: EMAIL, password: PASSWORD });
    const done = await agent.submit(consentPage, /\/consent$/, { share: 'chosen', device: [s.fridge] });
    expect(done.html).toContain('Laundry Pal is linked to your appliances');

    const tokens = await client.pollDeviceAuthorizationGrant(s.config, started);
    expect(tokens.scope?.split(' ').sort()).toEqual(['control', 'devices']);
    expect(ids((await partner(s, 'GET', '/devices', tokens.access_token)).json())).toEqual([s.fridge]);
  }, 30_000);

  describe('once the code expired', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('tells the polling device expired_token, so that it starts again, and the page that the code expired', async () => {
      const started = await client.initiateDeviceAuthorization(s.config, { scope: 'devices' });
      // Ten minutes (the code's life) and a second later, for the store's sweep as for oidc-provider.
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 601_000, shouldAdvanceTime: true });
      await s.test.ctx.store.deleteExpiredOAuthRecords(Date.now(), 100);

      const polled = await tokenRequest(s, { grant_type: DEVICE_CODE_GRANT, device_code: started.device_code });
      expect(polled).toMatchObject({ status: 400, body: { error: 'expired_token' } });
      const agent = new OwnerAgent(s.base);
      const page = await agent.submit(await agent.follow('/device'), /\/oauth\/device$/, { user_code: started.user_code });
      expect(page.html).toContain('That code is wrong or has expired');
    });
  });

  it('refuses a wrong code on the page', async () => {
    const agent = new OwnerAgent(s.base);
    const entry = await agent.follow('/device');
    const again = await agent.submit(entry, /\/oauth\/device$/, { user_code: 'BCDF-GHJK' });
    expect(again.html).toContain('That code is wrong or has expired');
  });
});

describe('a consent', () => {
  it('silences the messages about devices it no longer shares, and lists only those it does', async () => {
    const { ctx } = s.test;
    const wide = await link('devices push', 'all');
    await partner(s, 'GET', '/devices', wide.access_token);
    for (const device of [s.washer, s.fridge]) expect((await partner(s, 'POST', `/push/${device}`, wide.access_token)).statusCode).toBe(200);

    const narrow = await link('devices push', [s.washer]);
    expect(ids((await partner(s, 'GET', '/push', narrow.access_token)).json())).toEqual([s.washer]);
    // The earlier grant's tokens no longer act for the pair.
    expect((await partner(s, 'GET', '/devices', wide.access_token)).json().error.code).toBe('1202');

    await ctx.devices.push(s.fridge, 'DOOR_IS_OPEN');
    await ctx.devices.push(s.washer, 'WASHING_IS_COMPLETE');
    const { deviceId: added } = (await ctx.devices.register(s.userNumber, { deviceType: 'DEVICE_WASHER', alias: 'Second washer', virtual: true })).device;
    const messages = await ctx.store.listMessages(s.serviceId, {});
    expect(messages.map((m) => [m.pushType, m.deviceId])).toEqual([['DEVICE_PUSH', s.washer]]);
    expect(ids((await partner(s, 'GET', '/devices', narrow.access_token)).json())).not.toContain(added);
  });
});

describe('unlinking', () => {
  it('answers 1202 to the tokens of the grant and stops its refresh token', async () => {
    const tokens = await link('devices', 'all');
    expect((await partner(s, 'GET', '/devices', tokens.access_token)).statusCode).toBe(200);
    await s.test.ctx.owners.unlink(s.userNumber, s.serviceId);
    expect((await partner(s, 'GET', '/devices', tokens.access_token)).json().error.code).toBe('1202');
    await expect(client.refreshTokenGrant(s.config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });
});
