/**
 * The console's routes without a browser (DESIGN H): who gets in, CSRF on every form, and that the
 * pages show what the admin API answers and refusals with their code and message.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { FLASH_TTL_MS } from '../../src/console/session.js';
import { createContext } from '../../src/context.js';
import { deliveryHeaders } from '../../src/delivery/attempt.js';
import { signatureHeaders } from '../../src/delivery/sign.js';
import { systemClock } from '../../src/ids.js';
import { timerScheduler } from '../../src/sim/scheduler.js';
import { ADMIN_TOKEN, callAdmin, createWorld, testApp, testStore, type TestApp } from '../helpers/app.js';
import { createTestDatabase, isPostgresUrl, postgresAdminUrl } from '../helpers/postgres.js';
import { signIn, visit } from './session.js';

let t: TestApp;
beforeEach(async () => {
  t = await testApp();
});
afterEach(async () => {
  await t.close();
});

describe('signing in', () => {
  it('sends a visitor without a session to the sign-in page, and refuses its forms', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/console/services' });
    expect(page.statusCode).toBe(303);
    expect(page.headers.location).toBe('/console/sign-in?next=%2Fconsole%2Fservices');
    const form = await t.app.inject({ method: 'POST', url: '/console/services/x/enabled', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'enabled=true' });
    expect(form.statusCode).toBe(401);
  });

  it('refuses a wrong admin token and keeps the visitor out', async () => {
    const visitor = await visit(t.app);
    const answer = await visitor.post('/console/sign-in', { token: 'not-the-token', next: '/console' });
    expect(answer.statusCode).toBe(401);
    expect(answer.body).toContain('The admin token is wrong.');
    expect((await visitor.get('/console')).statusCode).toBe(303);
  });

  it('signs in with the admin token: an HttpOnly, SameSite=Lax cookie, Secure behind TLS, and back where it was going', async () => {
    const visitor = await visit(t.app);
    const answer = await t.app.inject({
      method: 'POST',
      url: '/console/sign-in',
      headers: { cookie: visitor.cookie, 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-proto': 'https' },
      payload: new URLSearchParams({ _csrf: visitor.csrf, token: 'test-admin-token', next: '/console/devices' }).toString(),
    });
    expect(answer.statusCode).toBe(303);
    expect(answer.headers.location).toBe('/console/devices');
    const cookie = String(answer.headers['set-cookie']);
    expect(cookie).toMatch(/^console_session=[^;]+; Path=\/console; HttpOnly; SameSite=Lax; Max-Age=43200; Secure$/);
    const page = await t.app.inject({ method: 'GET', url: '/console/devices', headers: { cookie: cookie.split(';')[0]! } });
    expect(page.statusCode).toBe(200);
  });

  it('sets Secure behind a chain of proxies (the first X-Forwarded-Proto) and when PUBLIC_URL is https, as the owner pages do', async () => {
    const signInOver = async (app: TestApp['app'], headers: Record<string, string>) => {
      const visitor = await visit(app);
      const answer = await app.inject({
        method: 'POST',
        url: '/console/sign-in',
        headers: { cookie: visitor.cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
        payload: new URLSearchParams({ _csrf: visitor.csrf, token: 'test-admin-token', next: '/console' }).toString(),
      });
      return String(answer.headers['set-cookie']);
    };
    expect(await signInOver(t.app, { 'x-forwarded-proto': 'https, http' })).toMatch(/; Secure$/);
    expect(await signInOver(t.app, { 'x-forwarded-proto': 'http' })).not.toMatch(/Secure/);
    const published = await testApp({ settings: { PUBLIC_URL: 'https://kic-qa-ext.example.com' } });
    try {
      expect(await signInOver(published.app, {})).toMatch(/; Secure$/);
    } finally {
      await published.close();
    }
  });

  it('never sends a signed-in visitor off the console', async () => {
    const visitor = await visit(t.app);
    const answer = await visitor.post('/console/sign-in', { token: 'test-admin-token', next: '//evil.example/' });
    expect(answer.headers.location).toBe('/console');
  });

  it('goes to the overview, not to a fault, when where it was going could not be sent as a Location', async () => {
    for (const next of ['/console/devices\r\nSet-Cookie: x=y', '/console/devices/日本']) {
      const visitor = await visit(t.app);
      const answer = await visitor.post('/console/sign-in', { token: 'test-admin-token', next });
      expect([answer.statusCode, answer.headers.location]).toEqual([303, '/console']);
      const again = await visitor.get(`/console/sign-in?next=${encodeURIComponent(next)}`);
      expect([again.statusCode, again.headers.location]).toEqual([303, '/console']);
    }
  });

  it('refuses a sign-in form without the CSRF token of its session', async () => {
    const visitor = await visit(t.app);
    const other = await visit(t.app);
    expect((await visitor.post('/console/sign-in', { token: 'test-admin-token' }, '')).statusCode).toBe(403);
    expect((await visitor.post('/console/sign-in', { token: 'test-admin-token' }, other.csrf)).statusCode).toBe(403);
  });

  it('turns a one-time link into a session once, and lets the operator it signed in through it again', async () => {
    const { store, close } = await testStore();
    const ctx = createContext(loadConfig('test', { ADMIN_TOKEN }), store, systemClock, { scheduler: timerScheduler });
    const { server, signInCodes } = await buildApp(ctx);
    try {
      const url = `/console/sign-in/${signInCodes.issue(Date.now())}`;
      const first = await server.inject({ method: 'GET', url });
      expect(first.statusCode).toBe(303);
      expect(first.headers.location).toBe('/console');
      const cookie = String(first.headers['set-cookie']).split(';')[0]!;
      expect((await server.inject({ method: 'GET', url: '/console', headers: { cookie } })).statusCode).toBe(200);
      const again = await server.inject({ method: 'GET', url });
      expect(again.statusCode).toBe(401);
      expect(again.body).toContain('used already or has expired');
      // Opened again in the browser it signed in (a second tab, the terminal's link clicked twice): that operator is in.
      const signedIn = await server.inject({ method: 'GET', url, headers: { cookie } });
      expect(signedIn.statusCode).toBe(303);
      expect(signedIn.headers.location).toBe('/console');
    } finally {
      await server.close();
      await close();
    }
  });

  it('refuses a forged session cookie', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/console', headers: { cookie: 'console_session=abc.o.99999999999999.forged' } });
    expect(page.statusCode).toBe(303);
  });

  it('signs out', async () => {
    const visitor = await signIn(t.app);
    const out = await visitor.post('/console/sign-out', {});
    expect(out.statusCode).toBe(303);
    expect(String(out.headers['set-cookie'])).toContain('Max-Age=0');
  });
});

describe('assets', () => {
  it('serves its stylesheet and script itself, to anyone, cacheable; pages never are', async () => {
    for (const [url, type] of [['/console/assets/console.css', 'text/css'], ['/console/assets/console.js', 'text/javascript']] as const) {
      const answer = await t.app.inject({ method: 'GET', url });
      expect(answer.statusCode).toBe(200);
      expect(answer.headers['content-type']).toBe(`${type}; charset=utf-8`);
      expect(answer.headers['cache-control']).toBe('public, max-age=3600');
    }
    const visitor = await signIn(t.app);
    const page = await visitor.get('/console');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.body).not.toMatch(/(src|href)="https?:/);
  });
});

describe('forms', () => {
  it('refuses every form of a signed-in operator without the CSRF token, and changes nothing', async () => {
    const world = await createWorld(t.ctx, { deviceTypes: [] });
    const visitor = await signIn(t.app);
    const answer = await visitor.post(`/console/services/${world.serviceId}/enabled`, { enabled: 'false' }, 'forged');
    expect(answer.statusCode).toBe(403);
    expect((await t.ctx.accounts.getService(world.serviceId)).enabled).toBe(true);
    const done = await visitor.post(`/console/services/${world.serviceId}/enabled`, { enabled: 'false' });
    expect(done.statusCode).toBe(303);
    expect((await t.ctx.accounts.getService(world.serviceId)).enabled).toBe(false);
  });

  it('takes forms only: a JSON body is refused (415) before it reaches an action, and changes nothing', async () => {
    const world = await createWorld(t.ctx, { deviceTypes: [] });
    const visitor = await signIn(t.app);
    const answer = await t.app.inject({
      method: 'POST',
      url: `/console/services/${world.serviceId}/redirect-uris`,
      headers: { cookie: visitor.cookie, 'content-type': 'application/json' },
      payload: JSON.stringify({ _csrf: [visitor.csrf], redirectUris: [5] }),
    });
    expect([answer.statusCode, answer.headers['content-type']]).toEqual([415, 'text/html; charset=utf-8']);
    expect(await t.ctx.accounts.redirectUris(world.serviceId)).toEqual([]);
  });

  it('refuses a form holding U+0000 (1000) before any action, on both stores alike, as it refuses %00 in the URL', async () => {
    const world = await createWorld(t.ctx, { deviceTypes: [] });
    const visitor = await signIn(t.app);
    const answer = await visitor.post(`/console/services/${world.serviceId}/redirect-uris`, { redirectUris: 'https://partner.example/a\u0000b' });
    expect([answer.statusCode, answer.body]).toEqual([400, expect.stringContaining('<strong>1000</strong>')]);
    expect(await t.ctx.accounts.redirectUris(world.serviceId)).toEqual([]);
  });

  it("sets where a service's messages go, clears the event URL with an empty field, and shows a refused URL with its code", async () => {
    const world = await createWorld(t.ctx, { deviceTypes: [] });
    const visitor = await signIn(t.app);
    const done = await visitor.post(`/console/services/${world.serviceId}/callback-urls`, { callbackUrl: 'http://127.0.0.1:9000/hooks', eventCallbackUrl: '' });
    expect([done.statusCode, done.headers.location]).toEqual([303, '/console/services']);
    expect((await visitor.follow(done)).body).toContain("push messages go to http://127.0.0.1:9000/hooks, its events to the push URL.");
    expect(await t.ctx.accounts.getService(world.serviceId)).toMatchObject({ callbackUrl: 'http://127.0.0.1:9000/hooks', eventCallbackUrl: null });
    const refused = await visitor.post(`/console/services/${world.serviceId}/callback-urls`, { callbackUrl: 'ftp://partner.example/hooks', eventCallbackUrl: '' });
    expect([refused.statusCode, refused.body]).toEqual([400, expect.stringContaining('Refused 1102')]);
    // The form keeps what was typed, to be corrected, as the redirect URIs' form does.
    expect(refused.body).toMatch(/name="callbackUrl" type="url" value="ftp:\/\/partner.example\/hooks"/);
    expect((await t.ctx.accounts.getService(world.serviceId)).callbackUrl).toBe('http://127.0.0.1:9000/hooks');
  });

  it('rotates the webhook secret, the previous one signing 24 h more or, for a leaked one, retired at once (DESIGN J)', async () => {
    const world = await createWorld(t.ctx, { deviceTypes: [] });
    const visitor = await signIn(t.app);
    expect((await visitor.get('/console/services')).body).toContain('name="expirePreviousNow"');
    const first = (await t.ctx.accounts.getService(world.serviceId)).webhookSecrets[0]!.secret;
    const kept = await visitor.follow(await visitor.post(`/console/services/${world.serviceId}/rotate-secret`, {}));
    expect(kept.body).toContain('the previous one signs for 24 h more');
    const second = (await t.ctx.accounts.getService(world.serviceId)).webhookSecrets.map((s) => s.secret);
    expect(second).toHaveLength(2);
    expect(second[1]).toBe(first);
    const retired = await visitor.follow(await visitor.post(`/console/services/${world.serviceId}/rotate-secret`, { expirePreviousNow: 'true' }));
    expect(retired.statusCode).toBe(200);
    expect(retired.body).toContain('the previous one no longer signs');
    const third = (await t.ctx.accounts.getService(world.serviceId)).webhookSecrets.map((s) => s.secret);
    expect(third).toHaveLength(1);
    expect(retired.body).toContain(third[0]);
  });

  it("sets a service's OAuth redirect URIs, as the admin API shows them, and shows a refused one with its code", async () => {
    const world = await createWorld(t.ctx, { deviceTypes: [] });
    const visitor = await signIn(t.app);
    const uris = 'https://partner.example/callback\nhttp://127.0.0.1:3000/cb';
    const done = await visitor.post(`/console/services/${world.serviceId}/redirect-uris`, { redirectUris: uris });
    expect([done.statusCode, done.headers.location]).toEqual([303, '/console/services']);
    expect((await visitor.follow(done)).body).toContain('now has 2 redirect URIs.');
    expect(await t.ctx.accounts.redirectUris(world.serviceId)).toEqual(['https://partner.example/callback', 'http://127.0.0.1:3000/cb']);
    const refused = await visitor.post(`/console/services/${world.serviceId}/redirect-uris`, { redirectUris: 'https://partner.example/new\nnot a url' });
    expect(refused.body).toContain('1102');
    // The refusal names the whole line, and the form keeps what was typed, to be corrected.
    expect(refused.body).toContain('&quot;not a url&quot;');
    expect(refused.body).toMatch(/<textarea[^>]*>https:\/\/partner.example\/new\nnot a url<\/textarea>/);
    expect(await t.ctx.accounts.redirectUris(world.serviceId)).toEqual(['https://partner.example/callback', 'http://127.0.0.1:3000/cb']);
  });

  it('shows a refused control with its code and message, and a control that applies', async () => {
    const world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_REFRIGERATOR'] });
    const fridge = world.devices[0]!.deviceId;
    const visitor = await signIn(t.app);
    const page = await visitor.get(`/console/devices/${fridge}`);
    expect(page.body).toContain('type="range"');
    const path = /name="path" value="([^"]*targetTemperatureC)"/.exec(page.body)?.[1];
    expect(path).toBeDefined();
    const refused = await visitor.post(`/console/devices/${fridge}/control`, { path: path!, value: '99' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toMatch(/Refused 1102<\/span>: [^<]*targetTemperatureC must be between/);
    const applied = await visitor.post(`/console/devices/${fridge}/control`, { path: path!, value: '3' });
    expect([applied.statusCode, applied.headers.location]).toEqual([303, `/console/devices/${fridge}`]);
    expect((await visitor.follow(applied)).body).toContain('set; status version');
  });

  it("runs a virtual appliance's simulator actions and sets the time scale", async () => {
    const world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_REFRIGERATOR'] });
    const fridge = world.devices[0]!.deviceId;
    const visitor = await signIn(t.app);
    await visitor.get(`/console/devices/${fridge}`);
    const opened = await visitor.follow(await visitor.post(`/console/devices/${fridge}/sim`, { action: 'open-door' }));
    expect(opened.statusCode).toBe(200);
    expect(opened.body).toContain('open-door done');
    expect(opened.body).toMatch(/data-path="doorStatus\[locationName=MAIN\]\.doorState">OPEN</);
    const refused = await visitor.post(`/console/devices/${fridge}/sim`, { action: 'fly' });
    expect(refused.body).toMatch(/Refused 1102<\/span>: action must be one of/);
    const scaled = await visitor.follow(await visitor.post(`/console/devices/${fridge}/time-scale`, { scale: '60' }));
    expect(scaled.body).toContain('Time scale set to 60.');
    expect(t.ctx.simulator.timeScale).toBe(60);
    for (const typed of ['abc', '1e309']) {
      const refusedScale = await visitor.post(`/console/devices/${fridge}/time-scale`, { scale: typed });
      expect(refusedScale.body).toContain(`got &quot;${typed}&quot;`);
    }
    expect(t.ctx.simulator.timeScale).toBe(60);
  });

  it('answers an unknown device with its refusal as a page', async () => {
    const visitor = await signIn(t.app);
    const page = await visitor.get('/console/devices/nope');
    expect(page.statusCode).toBe(404);
    expect(page.body).toContain('1205');
  });
});

describe('after an action (Post/Redirect/Get)', () => {
  it('redirects a rotation to the services page, which shows the new secret once: never in the URL, never on a reload', async () => {
    const world = await createWorld(t.ctx, { deviceTypes: [] });
    const visitor = await signIn(t.app);
    await visitor.get('/console/services');
    const answer = await visitor.post(`/console/services/${world.serviceId}/rotate-secret`, {});
    const secret = (await t.ctx.accounts.getService(world.serviceId)).webhookSecrets[0]!.secret;
    expect([answer.statusCode, answer.headers.location]).toEqual([303, '/console/services']);
    expect(answer.body).not.toContain(secret);
    const shown = await visitor.follow(answer);
    expect(shown.body).toContain(`shown this once: ${secret}`);
    expect(shown.headers['cache-control']).toBe('no-store');
    const reloaded = await visitor.get('/console/services');
    expect(reloaded.body).not.toContain(secret);
    expect(reloaded.body).toContain('<div id="outcome" aria-live="polite"></div>');
    expect((await t.ctx.accounts.getService(world.serviceId)).webhookSecrets).toHaveLength(2);
  });

  it("shows an action's message to the session that acted only, and not once it is a minute old", async () => {
    let offset = 0;
    const timed = await testApp({ clock: { now: () => Date.now() + offset } });
    try {
      const world = await createWorld(timed.ctx, { deviceTypes: [] });
      const [operator, other] = [await signIn(timed.app), await signIn(timed.app)];
      const done = await operator.post(`/console/services/${world.serviceId}/enabled`, { enabled: 'false' });
      expect((await other.get('/console/services')).body).not.toContain('is disabled: its messages are held.');
      expect((await operator.follow(done)).body).toContain('test service is disabled: its messages are held.');
      const late = await operator.post(`/console/services/${world.serviceId}/enabled`, { enabled: 'true' });
      offset += FLASH_TTL_MS;
      expect((await operator.follow(late)).body).not.toContain('is enabled');
      expect((await timed.ctx.accounts.getService(world.serviceId)).enabled).toBe(true);
    } finally {
      await timed.close();
    }
  });

  it('shows the message on the page after the redirect when another node of the deployment serves it (DESIGN F)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'console-flash-'));
    const database = isPostgresUrl(process.env.TEST_DATABASE_URL) ? await createTestDatabase(postgresAdminUrl()) : undefined;
    const databaseUrl = database?.url ?? `sqlite:${join(dir, 'shared.db')}`;
    const [a, b] = [await testApp({ databaseUrl }), await testApp({ databaseUrl })];
    try {
      const world = await createWorld(a.ctx, { deviceTypes: ['DEVICE_REFRIGERATOR'] });
      const fridge = world.devices[0]!.deviceId;
      const visitor = await signIn(a.app);
      await visitor.get(`/console/devices/${fridge}`);
      const answer = await visitor.post(`/console/devices/${fridge}/sim`, { action: 'open-door' });
      const page = await b.app.inject({ method: 'GET', url: answer.headers.location as string, headers: { cookie: visitor.cookie } });
      expect([page.statusCode, page.body]).toEqual([200, expect.stringContaining('open-door done')]);
    } finally {
      await a.close();
      await b.close();
      await database?.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the delivery log', () => {
  it('shows each message with its body and headers, resends one and recovers the failed ones', async () => {
    const world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_WASHER'] });
    const washer = world.devices[0]!.deviceId;
    // The service's first GET /devices subscribes it to the user's lifecycle messages.
    expect((await t.app.inject({ method: 'GET', url: '/devices', headers: world.headers() })).statusCode).toBe(200);
    await t.ctx.devices.rename(washer, 'Laundry');
    const [message] = (await callAdmin(t.app, 'GET', `/admin/services/${world.serviceId}/messages`)).json().response as { messageId: string; sequence: number }[];
    const visitor = await signIn(t.app);
    const log = (await visitor.get(`/console/services/${world.serviceId}/messages`)).body;
    expect(log).toContain(`data-message-id="${message!.messageId}"`);
    expect(log).toContain(`webhook-id: ${message!.messageId}`);
    expect(log).toContain(`webhook-sequence: ${message!.sequence}`);
    expect(log).toMatch(/webhook-signature: v1,[A-Za-z0-9+/=]+/);
    expect(log).toContain('&quot;pushType&quot;: &quot;DEVICE_ALIAS_CHANGED&quot;');
    const resent = await visitor.follow(await visitor.post(`/console/messages/${message!.messageId}/resend`, { serviceId: world.serviceId }));
    expect(resent.body).toContain(`Message ${message!.messageId} is due again, with the same webhook-id.`);
    const recovered = await visitor.follow(await visitor.post(`/console/services/${world.serviceId}/recover`, { since: '2020-01-01T00:00' }));
    expect(recovered.body).toContain('0 failed messages are due again.');
    const refused = await visitor.post(`/console/services/${world.serviceId}/recover`, { since: 'yesterday' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('Refused 1102');
  });

  it('goes back to the log as filtered after a resend or a recovery from it', async () => {
    const world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_WASHER', 'DEVICE_DRYER'] });
    const [washer, dryer] = world.devices.map((d) => d.deviceId);
    expect((await t.app.inject({ method: 'GET', url: '/devices', headers: world.headers() })).statusCode).toBe(200);
    await t.ctx.devices.rename(washer!, 'Laundry');
    await t.ctx.devices.rename(dryer!, 'Dryer');
    const visitor = await signIn(t.app);
    const log = (await visitor.get(`/console/services/${world.serviceId}/messages?deviceId=${dryer}`)).body;
    expect(log).toContain('1 message, newest first.');
    const action = (form: string) => new RegExp(`<form method="post" action="([^"]*/${form}[^"]*)"`).exec(log)![1]!.replaceAll('&amp;', '&');
    for (const [url, form] of [[action('resend'), {}], [action('recover'), { since: '2020-01-01T00:00' }]] as const) {
      const answer = await visitor.post(url, { serviceId: world.serviceId, ...form });
      expect([answer.statusCode, answer.headers.location]).toEqual([303, `/console/services/${world.serviceId}/messages?deviceId=${dryer}`]);
      const page = await visitor.follow(answer);
      expect(page.body).toContain('1 message, newest first.');
      expect(page.body).toContain(`name="deviceId" value="${dryer}"`);
      expect(page.body).toContain('class="outcome ok"');
    }
  });

  it('shows the signature an attempt was sent with, and never one it was not: not after its secret was rotated out', async () => {
    let offset = 0;
    const timed = await testApp({ clock: { now: () => Date.now() + offset } });
    try {
      const world = await createWorld(timed.ctx, { deviceTypes: ['DEVICE_WASHER'] });
      await timed.ctx.accounts.updateService(world.serviceId, { callbackUrl: 'http://127.0.0.1:9/hooks' });
      expect((await timed.app.inject({ method: 'GET', url: '/devices', headers: world.headers() })).statusCode).toBe(200);
      await timed.ctx.devices.rename(world.devices[0]!.deviceId, 'Laundry');
      const now = timed.ctx.clock.now();
      const [claimed] = await timed.ctx.store.claimDeliveries({ owner: 'test', now, leaseMs: 10_000, limit: 10, perEndpointLimit: 10, inFlight: {} });
      const sent = deliveryHeaders(claimed!, now)['webhook-signature'];
      const outcome = { messageId: claimed!.message.messageId, fencingToken: claimed!.fencingToken, startedAt: now, durationMs: 3, responseStatus: 500, responseBody: 'down', error: null };
      await timed.ctx.store.recordAttempts([{ ...outcome, verdict: { kind: 'retry', nextAttemptAt: now + 60_000 } }], now, 86_400_000);
      const visitor = await signIn(timed.app);
      const log = `/console/services/${world.serviceId}/messages`;
      expect((await visitor.get(log)).body).toContain(`webhook-signature: ${sent}`);
      // Two rotations later the secret it was signed with is gone (DESIGN J keeps the current and one previous).
      for (let i = 0; i < 2; i++) {
        offset += 1000;
        await timed.ctx.accounts.rotateSecret(world.serviceId);
      }
      const current = (await timed.ctx.accounts.getService(world.serviceId)).webhookSecrets[0]!.secret;
      const unsent = signatureHeaders({ messageId: claimed!.message.messageId, timestamp: Math.floor(now / 1000), body: claimed!.message.body, secrets: [current] })['webhook-signature'];
      const page = (await visitor.get(log)).body;
      expect(page).not.toContain(unsent);
      expect(page).toContain('webhook-signature: — (signed with a secret rotated out since)');
    } finally {
      await timed.close();
    }
  });

  it('shows 50 messages, and a link to the older ones with the same filters, page after page to the first', async () => {
    const world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_WASHER', 'DEVICE_DRYER'] });
    const [washer, dryer] = world.devices.map((d) => d.deviceId) as [string, string];
    expect((await t.app.inject({ method: 'GET', url: '/devices', headers: world.headers() })).statusCode).toBe(200);
    for (let i = 0; i < 101; i++) {
      await t.ctx.devices.rename(washer, `Laundry ${i}`);
      await t.ctx.devices.rename(dryer, `Dryer ${i}`);
    }
    const visitor = await signIn(t.app);
    const aliases = (page: string) => [...page.matchAll(/&quot;alias&quot;: &quot;([^&]*)&quot;/g)].map((m) => m[1]!);
    const pages: string[][] = [];
    const bodies: string[] = [];
    let url: string | undefined = `/console/services/${world.serviceId}/messages?deviceId=${washer}`;
    while (url) {
      const page: string = (await visitor.get(url)).body;
      pages.push(aliases(page));
      bodies.push(page);
      url = /<a class="button" href="([^"]*)">Older →<\/a>/.exec(page)?.[1]?.replaceAll('&amp;', '&');
      if (url) expect(url).toContain(`deviceId=${washer}&before=`);
    }
    const laundry = (from: number, to: number) => Array.from({ length: from - to + 1 }, (_, i) => `Laundry ${from - i}`);
    expect(pages).toEqual([laundry(100, 51), laundry(50, 1), laundry(0, 0)]);
    // A resend from an older page goes back to that page.
    const resend = /<form method="post" action="([^"]*\/resend[^"]*)"/.exec(bodies[1]!)![1]!.replaceAll('&amp;', '&');
    const answer = await visitor.post(resend, { serviceId: world.serviceId });
    expect([answer.statusCode, answer.headers.location]).toEqual([303, expect.stringContaining(`deviceId=${washer}&before=`)]);
    expect(aliases((await visitor.follow(answer)).body)).toEqual(laundry(50, 1));
  });

  it('refuses an older page after a message not of the service, with 1102', async () => {
    const world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_WASHER'] });
    const visitor = await signIn(t.app);
    const page = await visitor.get(`/console/services/${world.serviceId}/messages?before=nonsense`);
    expect([page.statusCode, page.body]).toEqual([400, expect.stringContaining('1102')]);
  });
});

describe('what the pages show', () => {
  it('shows the overview numbers that GET /admin/overview answers', async () => {
    const world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_WASHER', 'DEVICE_DRYER'] });
    await t.ctx.devices.setConnection(world.devices[0]!.deviceId, false);
    const admin = (await callAdmin(t.app, 'GET', '/admin/overview')).json().response;
    expect(admin).toMatchObject({ services: 1, users: 1, devices: 2, devicesOnline: 1 });
    const visitor = await signIn(t.app);
    const page = (await visitor.get('/console')).body;
    expect(page).toContain(`<span class="n" id="n-services">${admin.services}</span>`);
    expect(page).toContain(`<span class="n" id="n-users">${admin.users}</span>`);
    expect(page).toContain(`<span class="n" id="n-devices">${admin.devicesOnline} / ${admin.devices}</span>`);
    expect(page).toContain(`<span class="n" id="n-pending">${admin.pending + admin.delivering}</span>`);
  });

  it("counts the messages held for a service without a callback URL as such, not as a disabled endpoint's (the sandbox's first state)", async () => {
    const world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_WASHER'] });
    const washer = world.devices[0]!.deviceId;
    expect((await t.app.inject({ method: 'GET', url: '/devices', headers: world.headers() })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'POST', url: `/push/${washer}`, headers: world.headers() })).statusCode).toBe(200);
    await callAdmin(t.app, 'POST', `/admin/devices/${washer}/push`, { pushCode: 'WASHING_IS_COMPLETE' });
    // SQLite holds it as it is recorded, PostgreSQL at the next claim (no dispatcher runs here): one claim, which delivers nothing.
    expect(await t.ctx.store.claimDeliveries({ owner: 'test', now: Date.now(), leaseMs: 10_000, limit: 10, perEndpointLimit: 10, inFlight: {} })).toEqual([]);
    expect((await callAdmin(t.app, 'GET', '/admin/overview')).json().response).toMatchObject({ held: 1, troubledEndpoints: [] });
    const page = (await (await signIn(t.app)).get('/console')).body;
    expect(page).toContain('<span class="n" id="n-held">1</span><span class="label">held: no callback URL, or disabled</span>');
  });

  it('lists users and devices as GET /admin/users and /admin/devices do, a page at a time', async () => {
    const world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_WASHER', 'DEVICE_DRYER', 'DEVICE_STYLER'] });
    const ids = world.devices.map((d) => d.deviceId).sort();
    const first = (await callAdmin(t.app, 'GET', '/admin/devices?limit=2')).json().response as { deviceId: string }[];
    expect(first.map((d) => d.deviceId)).toEqual(ids.slice(0, 2));
    const next = (await callAdmin(t.app, 'GET', `/admin/devices?limit=2&after=${ids[1]}`)).json().response as { deviceId: string }[];
    expect(next.map((d) => d.deviceId)).toEqual(ids.slice(2));
    expect((await callAdmin(t.app, 'GET', '/admin/users')).json().response).toEqual([{ userNumber: world.userNumber, countryCode: world.countryCode }]);
    const visitor = await signIn(t.app);
    const page = (await visitor.get('/console/devices')).body;
    for (const id of ids) expect(page).toContain(id);
    expect((await visitor.get('/console/users')).body).toContain(world.userNumber);
  });

  it('reads a repeated query parameter as its first value, as a repeated form field, on every page that takes one', async () => {
    const world = await createWorld(t.ctx, { deviceTypes: ['DEVICE_WASHER', 'DEVICE_DRYER', 'DEVICE_STYLER'] });
    const ids = world.devices.map((d) => d.deviceId).sort();
    expect((await t.app.inject({ method: 'GET', url: '/devices', headers: world.headers() })).statusCode).toBe(200);
    await t.ctx.devices.rename(ids[0]!, 'Renamed');
    const visitor = await signIn(t.app);
    const devices = await visitor.get(`/console/devices?after=${ids[0]}&after=${ids[2]}`);
    expect(devices.statusCode).toBe(200);
    expect(devices.body).not.toContain(`>${ids[0]}<`);
    expect(devices.body).toContain(`>${ids[1]}<`);
    const users = await visitor.get(`/console/users?after=&after=${world.userNumber}`);
    expect([users.statusCode, users.body]).toEqual([200, expect.stringContaining(world.userNumber)]);
    const log = await visitor.get(`/console/services/${world.serviceId}/messages?deviceId=${ids[0]}&deviceId=${ids[1]}`);
    expect([log.statusCode, log.body]).toEqual([200, expect.stringContaining('1 message, newest first.')]);
  });

  it("answers a service's endpoint health", async () => {
    const world = await createWorld(t.ctx, { deviceTypes: [] });
    const answer = await callAdmin(t.app, 'GET', `/admin/services/${world.serviceId}/endpoint`);
    expect(answer.json().response).toEqual({ serviceId: world.serviceId, name: 'test service', enabled: true, failingSince: null, disabledAt: null, disabledReason: null });
    expect((await callAdmin(t.app, 'GET', '/admin/services/nope/endpoint')).json().error.code).toBe('1305');
  });
});
