/**
 * /account lists every service that can reach the owner's devices (DESIGN G): those the owner
 * consented to, and those the operator connected with an admin token, which carry every scope and
 * see every device of their allowed types. Unlinking either is DELETE /user/service for the pair.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CSRF_FIELD } from '../../src/web/csrf.js';
import { callAdmin } from '../helpers/app.js';
import { OwnerAgent } from '../helpers/owner-agent.js';
import { authorizationRequest, codeFlow, EMAIL, linkWorld, partner, PASSWORD, type Setup } from './fixture.js';

let s: Setup;
beforeAll(async () => {
  s = await linkWorld();
}, 60_000);
afterAll(() => s?.test.close());

/** An admin token for the pair, as the sandbox links its demo service to the demo user. */
async function adminToken(serviceId: string): Promise<string> {
  const res = await callAdmin(s.test.app, 'POST', `/admin/users/${s.userNumber}/tokens`, { serviceId });
  expect(res.statusCode).toBe(200);
  return res.json().response.accessToken as string;
}

async function signedIn() {
  const agent = new OwnerAgent(s.base);
  const account = await agent.submit(await agent.follow('/account'), /sign-in$/, { email: EMAIL, password: PASSWORD });
  expect(account.html).toContain('<h2>Linked services</h2>');
  return { agent, account };
}

describe('the sign-in form of /account', () => {
  it("refuses a post without the browser's own pre-session cookie, as another site's form would send it (login CSRF)", async () => {
    // The attacker's own page, fetched with a blank pre-session cookie: its token would be the same for any blank one.
    const page = await fetch(`${s.base}/account`, { headers: { cookie: 'owner_pre=' } });
    const token = new RegExp(`name="${CSRF_FIELD}" value="([^"]+)"`).exec(await page.text())![1]!;
    expect(page.headers.get('set-cookie')).toMatch(/^owner_pre=[^;]+;/);
    // The victim's browser posts it cross-site: no pre-session cookie goes along.
    const form = new URLSearchParams({ [CSRF_FIELD]: token, email: EMAIL, password: PASSWORD });
    for (const cookie of [undefined, 'owner_pre=']) {
      const posted = await fetch(`${s.base}/account/sign-in`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie === undefined ? {} : { cookie }) },
        body: form.toString(),
      });
      expect(posted.status).toBe(401);
      expect(await posted.text()).toContain('The form expired; sign in again.');
      expect(posted.headers.getSetCookie().some((line) => line.startsWith('owner_session='))).toBe(false);
    }
  });
});

/** The table row of the service named so. */
function rowOf(html: string, name: string): string | undefined {
  return [...html.matchAll(/<tr>[\s\S]*?<\/tr>/g)].map((m) => m[0]).find((row) => row.startsWith(`<tr><td>${name}`));
}

describe('a service the operator linked with an admin token', () => {
  it('is listed with every scope and all devices of its types, and Unlink disconnects it: its token answers 1202', async () => {
    const { service, serviceKey } = await s.test.ctx.accounts.createService({ name: 'Oven Watch', allowedDevices: ['DEVICE_OVEN'] });
    const ovenWatch = { ...s, serviceId: service.serviceId, serviceKey };
    const token = await adminToken(service.serviceId);
    expect((await partner(ovenWatch, 'GET', '/devices', token)).json().response.map((d: { deviceId: string }) => d.deviceId)).toEqual([s.oven]);
    expect((await partner(ovenWatch, 'POST', `/push/${s.oven}`, token)).statusCode).toBe(200);

    const { agent, account } = await signedIn();
    const row = rowOf(account.html, 'Oven Watch');
    expect(row).toContain('linked by the operator, not by your consent');
    expect(row).toContain('<td>devices, control, push, events</td>');
    expect(row).toContain('<td>all of the types it may see, including later ones</td>');
    const unlink = new RegExp(`/account/services/${service.serviceId}/unlink$`);

    // The same CSRF-protected form as a consented service's.
    const forged = await agent.request(`/account/services/${service.serviceId}/unlink`, { form: { [CSRF_FIELD]: 'forged' } });
    expect(forged.status).toBe(403);
    expect((await partner(ovenWatch, 'GET', '/devices', token)).statusCode).toBe(200);

    const after = await agent.submit(account, unlink, {});
    expect(after.url).toBe(`${s.base}/account`);
    expect(rowOf(after.html, 'Oven Watch')).toBeUndefined();
    expect((await partner(ovenWatch, 'GET', '/devices', token)).json().error.code).toBe('1202');
    expect(await s.test.ctx.store.listPushSubscriptions(service.serviceId, s.userNumber)).toEqual([]);
    expect(await s.test.ctx.store.getConnection(service.serviceId, s.userNumber)).toBeUndefined();
  });
});

describe('an authorization from a browser signed in to /account', () => {
  it('skips the sign-in step, unless the service asked for a fresh sign-in (prompt=login)', async () => {
    const { agent } = await signedIn();
    const plain = await authorizationRequest(s, 'devices');
    expect((await agent.follow(plain.url.href)).html).toContain('Laundry Pal asks to link your appliances');
    const fresh = await authorizationRequest(s, 'devices');
    fresh.url.searchParams.set('prompt', 'login');
    const asked = await agent.follow(fresh.url.href);
    expect(asked.html).toContain('Sign in to link your appliances to Laundry Pal');
    expect((await agent.submit(asked, /\/login$/, { email: EMAIL, password: PASSWORD })).html).toContain('Laundry Pal asks to link your appliances');
  });
});

describe('a second consent from the same browser, for fewer scopes', () => {
  it('lists every scope the grant now holds, as the tokens of the first still carry them', async () => {
    const agent = new OwnerAgent(s.base);
    const first = await authorizationRequest(s, 'devices control');
    const consentPage = await agent.submit(await agent.follow(first.url.href), /\/login$/, { email: EMAIL, password: PASSWORD });
    await agent.submit(consentPage, /\/consent$/, { share: 'all' });
    // Signed in already: straight to the consent for the scope not yet granted.
    const second = await authorizationRequest(s, 'push');
    const again = await agent.follow(second.url.href);
    expect(again.html).toContain('Laundry Pal asks to link your appliances');
    await agent.submit(again, /\/consent$/, { share: 'chosen', device: [s.washer] });

    expect(await s.test.ctx.store.getDeviceShare(s.serviceId, s.userNumber)).toMatchObject({ scopes: ['devices', 'control', 'push'], deviceIds: [s.washer] });
    const { account } = await signedIn();
    expect(rowOf(account.html, 'Laundry Pal')).toContain('<td>devices, control, push</td><td>Washer</td>');
    await s.test.ctx.owners.unlink(s.userNumber, s.serviceId);
  });
});

describe('a service both consented to and linked by the operator', () => {
  it('is listed once, as the owner consented', async () => {
    await codeFlow(s, 'devices', [s.washer]);
    await adminToken(s.serviceId);

    const { agent, account } = await signedIn();
    expect(account.html.match(/aria-label="Unlink Laundry Pal"/g)).toHaveLength(1);
    const row = rowOf(account.html, 'Laundry Pal');
    expect(row).toContain('<td>devices</td><td>Washer</td>');
    expect(row).not.toContain('linked by the operator');

    const after = await agent.submit(account, new RegExp(`/account/services/${s.serviceId}/unlink$`), {});
    expect(after.html).toContain('No service is linked to your appliances.');
  });
});

describe('signing in to /account', () => {
  it('with an email holding NUL, which no login has: the wrong-credentials page, not a server error', async () => {
    const agent = new OwnerAgent(s.base);
    const page = await agent.follow('/account');
    const answer = await agent.submit(page, /sign-in$/, { email: 'owner\u0000@example.com', password: PASSWORD });
    expect(answer.status).toBe(401);
    expect(answer.html).toContain('The email or the password is wrong.');
  });
});

describe('the forms of /account, sent with NUL in an id or a name', () => {
  it('answer 1000, as the store refuses U+0000 in anything it is asked: never a server error, nothing changed', async () => {
    const { agent, account } = await signedIn();
    const hidden = Object.fromEntries([...account.html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]));
    const post = async (path: string, form: Record<string, string> = {}) => {
      const answer = await agent.request(path, { form: { ...hidden, ...form } });
      return [answer.status, JSON.parse(await answer.text()).error.code];
    };
    expect(await post('/account/devices/%00/rename', { alias: 'Kitchen' })).toEqual([400, '1000']);
    expect(await post(`/account/devices/${s.washer}/rename`, { alias: 'Wash\u0000er' })).toEqual([400, '1000']);
    expect(await post('/account/services/%00/unlink')).toEqual([400, '1000']);
    const after = await agent.follow('/account');
    expect(after.html).toBe(account.html);
  });
});
