/**
 * The console in a real browser (DESIGN H): Debian's Chromium driven by playwright-core against a
 * whole server (store, simulator, delivery) listening on an ephemeral port, with partners' webhook
 * receivers on loopback. With CONSOLE_SCREENSHOTS=<dir> (`npm run screenshots`) it saves a picture
 * of each page there.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { demoCountry } from '../../src/regions.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { startHttpServer, type LoopbackServer } from '../delivery/loopback.js';
import { ADMIN_TOKEN, partnerHeaders } from '../helpers/app.js';
import { hasChromium, launchBrowser } from '../helpers/browser.js';

const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS;

interface Partner {
  serviceId: string;
  serviceKey: string;
  accessToken: string;
  countryCode: string;
}

interface Delivered {
  id: string;
  body: { push?: { pushType: string }; event?: { pushType: string; deviceId: string; report: unknown } };
}

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function delivered(receiver: LoopbackServer): Delivered[] {
  return receiver.received.map((r) => ({ id: String(r.headers['webhook-id']), body: JSON.parse(r.body) as Delivered['body'] }));
}

describe.skipIf(!hasChromium)('the console in a browser', () => {
  let dir: string;
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  let healthy: LoopbackServer;
  let failing: LoopbackServer;
  let failingAnswers = 500;
  let fridge: string;
  let washer: string;
  let good: Partner;
  let bad: Partner;

  const admin = async (method: string, path: string, body?: unknown) => {
    const answer = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return ((await answer.json()) as { response: any }).response;
  };

  /** The partner's first call and an event subscription to `deviceId`, over the partner API. */
  const subscribe = async (partner: Partner, deviceId: string) => {
    expect((await fetch(`${server.url}/devices`, { headers: partnerHeaders(partner) })).status).toBe(200);
    const answer = await fetch(`${server.url}/event/${deviceId}`, { method: 'POST', headers: partnerHeaders(partner) });
    expect(answer.status).toBe(200);
  };

  const shoot = async (name: string) => {
    if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  };

  beforeAll(async () => {
    if (SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true });
    dir = mkdtempSync(join(tmpdir(), 'console-browser-'));
    healthy = await startHttpServer((_request, response) => response.writeHead(200).end('ok'));
    failing = await startHttpServer((_request, response) => response.writeHead(failingAnswers).end(failingAnswers === 200 ? 'ok' : 'upstream database is down'));
    server = await startServer(loadConfig('serve', {
      ADMIN_TOKEN,
      PHASE: 'QA',
      HOST: '127.0.0.1',
      PORT: '0',
      MQTT_PORT: '0',
      LOG_LEVEL: 'silent',
      DATABASE_URL: `sqlite:${join(dir, 'console.db')}`,
      DELIVERY_RETRY_SCHEDULE: '100ms,100ms',
      SIM_TIME_SCALE: '1',
    }));
    const { ctx } = server;
    const user = await ctx.accounts.createUser(demoCountry(ctx.config.region));
    fridge = (await ctx.devices.register(user.userNumber, { deviceType: 'DEVICE_REFRIGERATOR', alias: 'Kitchen fridge', virtual: true })).device.deviceId;
    washer = (await ctx.devices.register(user.userNumber, { deviceType: 'DEVICE_WASHER', alias: 'Washer', virtual: true })).device.deviceId;
    await ctx.devices.register(user.userNumber, { deviceType: 'DEVICE_AIR_CONDITIONER', alias: 'Bedroom AC' });
    const partner = async (name: string, callbackUrl: string): Promise<Partner> => {
      const { service, serviceKey } = await ctx.accounts.createService({ name, allowedDevices: ['DEVICE_REFRIGERATOR', 'DEVICE_WASHER', 'DEVICE_AIR_CONDITIONER'], callbackUrl });
      const { accessToken } = await ctx.accounts.issueToken(user.userNumber, service.serviceId);
      return { serviceId: service.serviceId, serviceKey, accessToken, countryCode: user.countryCode };
    };
    good = await partner('Home dashboard', healthy.url);
    bad = await partner('Energy insights', failing.url);
    await subscribe(good, fridge);
    await subscribe(bad, washer);
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await healthy?.close();
    await failing?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('signs in with the admin token', async () => {
    await page.goto(`${server.url}/console`);
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    await shoot('sign-in');
    await page.fill('#token', 'wrong');
    await page.click('button[type=submit]');
    await expect(page.locator('[role=alert]').textContent()).resolves.toContain('The admin token is wrong.');
    await page.fill('#token', ADMIN_TOKEN);
    await page.click('form[action="/console/sign-in"] button[type=submit]');
    await page.waitForURL(`${server.url}/console`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Overview');
  });

  it('changes the device from its page, and the subscribed receiver gets DEVICE_STATUS', async () => {
    await page.goto(`${server.url}/console/devices/${fridge}`);
    const version = Number(await page.locator('#version').textContent());
    const form = page.locator('form.control', { has: page.locator('input[name=path][value*="FRIDGE"][value$="targetTemperatureC"]') });
    await form.locator('input[type=range]').fill('5');
    await expect(form.locator('output').textContent()).resolves.toBe('5');
    await form.locator('button').click();
    await page.locator('#outcome.ok').waitFor();
    const event = await until('DEVICE_STATUS at the receiver', () => delivered(healthy).find((d) => d.body.event?.pushType === 'DEVICE_STATUS' && d.body.event.deviceId === fridge));
    expect(JSON.stringify(event.body.event?.report)).toContain('"targetTemperatureC":5');
    await until('the live status', async () => (Number(await page.locator('#version').textContent()) > version ? true : undefined));
    await shoot('device');
  });

  it('shows a simulator action live, without a reload', async () => {
    await page.goto(`${server.url}/console/devices/${fridge}`);
    // A mark on this document: it is still there after the changes, so none of them reloaded the page.
    await page.evaluate('globalThis.sameLoad = true');
    const door = page.locator('td[data-path$="doorState"]').first();
    await expect(door.textContent()).resolves.toBe('CLOSE');
    await page.click('button[name=action][value=open-door]');
    await expect(page.locator('#outcome.ok').textContent()).resolves.toContain('open-door done');
    await until('the door open on the page', async () => ((await door.textContent()) === 'OPEN' ? true : undefined));
    // From elsewhere (the admin API), the page follows too.
    await admin('POST', `/admin/devices/${fridge}/sim`, { action: 'close-door' });
    await until('the door closed on the page', async () => ((await page.locator('td[data-path$="doorState"]').first().textContent()) === 'CLOSE' ? true : undefined));
    // A partner's control: the status and the control form's slider follow.
    const slider = page.locator('form.control', { has: page.locator('input[name=path][value*="FRIDGE"][value$="targetTemperatureC"]') }).locator('input[type=range]');
    const control = await fetch(`${server.url}/devices/${fridge}`, {
      method: 'POST',
      headers: { ...partnerHeaders(good), 'content-type': 'application/json' },
      body: JSON.stringify({ temperatureInUnits: { locationName: 'FRIDGE', targetTemperatureC: 2 } }),
    });
    expect(control.status).toBe(200);
    await until('the slider at 2', async () => ((await slider.inputValue()) === '2' ? true : undefined));
    expect(await page.evaluate('globalThis.sameLoad')).toBe(true);
  });

  it('keeps a control input on a value it can send when the live status holds one it cannot', async () => {
    const { ctx } = server;
    const owner = (await ctx.devices.get(fridge)).userNumbers[0]!;
    // The purifier's timer reads SET but can only be set to UNSET; the oven shows °F, so its °C target is absent.
    const purifier = (await ctx.devices.register(owner, { deviceType: 'DEVICE_AIR_PURIFIER', alias: 'Purifier', virtual: true })).device.deviceId;
    const oven = (await ctx.devices.register(owner, { deviceType: 'DEVICE_OVEN', alias: 'Oven', virtual: true })).device.deviceId;
    const control = (path: string) => page.locator('form.control', { has: page.locator(`input[name=path][value="${path}"]`) });
    // Counts the status events the page's stream delivers (this listener runs before the page's own).
    await page.addInitScript(`globalThis.EventSource = class extends EventSource {
      constructor(...args) { super(...args); this.addEventListener('status', () => { globalThis.statusEvents = (globalThis.statusEvents || 0) + 1; }); }
    }`);
    /** Opens the page and waits until its first status event has been applied. */
    const openLive = async (deviceId: string) => {
      await page.goto(`${server.url}/console/devices/${deviceId}`);
      await page.waitForFunction('globalThis.statusEvents >= 1');
    };

    await openLive(purifier);
    await expect(page.locator('td[data-path="timer.absoluteStartTimer"]').textContent()).resolves.toBe('SET');
    const timer = control('timer.absoluteStartTimer');
    await expect(timer.locator('select').inputValue()).resolves.toBe('UNSET');
    await timer.locator('button').click();
    await page.locator('#outcome.ok, #outcome.refused').waitFor();
    await expect(page.locator('#outcome').textContent()).resolves.toBe('timer.absoluteStartTimer set; status version 2.');

    await openLive(oven);
    await expect(page.locator('td[data-path="OVEN/temperature[unit=C].targetTemperature"]').textContent()).resolves.toBe('—');
    const celsius = control('OVEN/temperature[unit=C].targetTemperature');
    await expect(celsius.locator('input[type=range]').inputValue()).resolves.toBe('75');
    await expect(celsius.locator('output').textContent()).resolves.toBe('75');
  });

  it('lets a hidden tab give up its live stream, so that six device tabs leave the browser a connection for the next page', async () => {
    // Chromium opens at most six HTTP/1.1 connections to one server, and each live stream holds one.
    const window = await browser.newContext();
    await window.addCookies(await page.context().cookies());
    const tabs = await Promise.all(Array.from({ length: 6 }, () => window.newPage()));
    for (const tab of tabs) {
      await tab.goto(`${server.url}/console/devices/${fridge}`);
      await tab.locator('#live').waitFor();
    }
    // Headless pages are all visible: each is told it went to the background, as a tab behind another is.
    const setVisibility = (tab: Page, state: 'hidden' | 'visible') => tab.evaluate(`
      Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => '${state}' });
      Object.defineProperty(document, 'hidden', { configurable: true, get: () => ${state === 'hidden'} });
      document.dispatchEvent(new Event('visibilitychange'));`);
    for (const tab of tabs) await setVisibility(tab, 'hidden');
    const next = await window.newPage();
    await next.goto(`${server.url}/console/devices/${washer}`, { timeout: 5000 });
    // Shown again, a tab follows the device as before.
    const [shown] = tabs;
    await setVisibility(shown!, 'visible');
    await admin('POST', `/admin/devices/${fridge}/sim`, { action: 'open-door' });
    await until('the door open on the tab shown again', async () => ((await shown!.locator('td[data-path$="doorState"]').first().textContent()) === 'OPEN' ? true : undefined));
    await admin('POST', `/admin/devices/${fridge}/sim`, { action: 'close-door' });
    await window.close();
  });

  it("shows a failing endpoint's attempts, and a resend delivers again with the same webhook-id", async () => {
    await admin('POST', `/admin/devices/${washer}/sim`, { action: 'start' });
    const messages = await until('a failed DEVICE_STATUS', async () => {
      const list = (await admin('GET', `/admin/services/${bad.serviceId}/messages?status=failed`)) as { messageId: string; attempts: unknown[] }[];
      return list.length ? list : undefined;
    });
    const failed = messages.at(-1)!;
    await page.goto(`${server.url}/console`);
    const numbers = await admin('GET', '/admin/overview');
    await expect(page.locator('#n-devices').textContent()).resolves.toBe(`${numbers.devicesOnline} / ${numbers.devices}`);
    await expect(page.locator('#n-services').textContent()).resolves.toBe(String(numbers.services));
    await expect(page.locator('#n-users').textContent()).resolves.toBe(String(numbers.users));
    await expect(page.locator('main').textContent()).resolves.toContain('Energy insights');
    await shoot('overview');
    await page.goto(`${server.url}/console/services`);
    await shoot('services');

    await page.goto(`${server.url}/console/services/${bad.serviceId}/messages`);
    const item = page.locator(`details[data-message-id="${failed.messageId}"]`);
    await item.locator('summary').click();
    const attempts = item.locator('tbody tr');
    await expect(attempts.count()).resolves.toBe(failed.attempts.length);
    await expect(attempts.first().textContent()).resolves.toContain('500');
    await expect(item.textContent()).resolves.toContain('upstream database is down');
    await expect(item.textContent()).resolves.toContain(`webhook-sequence: `);
    await shoot('delivery-log');

    const before = delivered(failing).filter((d) => d.id === failed.messageId).length;
    failingAnswers = 200;
    await item.locator('button', { hasText: 'Resend' }).click();
    await page.locator('#outcome.ok').waitFor();
    await until('the resent message', () => (delivered(failing).filter((d) => d.id === failed.messageId).length > before ? true : undefined));
    await until('delivered', async () => {
      const list = (await admin('GET', `/admin/services/${bad.serviceId}/messages`)) as { messageId: string; status: string }[];
      return list.find((m) => m.messageId === failed.messageId)?.status === 'delivered' ? true : undefined;
    });
  });

  it('shows a rotated secret once: reloading the page after it neither rotates again nor shows the secret', async () => {
    await page.goto(`${server.url}/console/services`);
    await page.locator('tr', { hasText: good.serviceId }).locator('button', { hasText: 'Rotate secret' }).click();
    await page.locator('#outcome.ok').waitFor();
    const secrets = (await server.ctx.accounts.getService(good.serviceId)).webhookSecrets;
    expect(page.url()).toBe(`${server.url}/console/services`);
    await expect(page.locator('#outcome').textContent()).resolves.toContain(`shown this once: ${secrets[0]!.secret}`);
    await page.reload();
    await expect(page.locator('#outcome').textContent()).resolves.toBe('');
    expect(await page.content()).not.toContain(secrets[0]!.secret);
    expect((await server.ctx.accounts.getService(good.serviceId)).webhookSecrets).toEqual(secrets);
  });

  it('says what the page after a done action answered when it is not that page, not that the session ended', async () => {
    const { ctx } = server;
    const user = await ctx.accounts.createUser(demoCountry(ctx.config.region));
    const dryer = (await ctx.devices.register(user.userNumber, { deviceType: 'DEVICE_DRYER', alias: 'Dryer', virtual: true })).device.deviceId;
    await page.goto(`${server.url}/console/devices/${dryer}`);
    // The device goes while its page is open; the time scale (every appliance's) is still set, and its page is no more.
    await admin('DELETE', `/admin/users/${user.userNumber}/devices/${dryer}`);
    await page.fill('#time-scale', '1');
    await page.locator('form[action$="/time-scale"] button').click();
    await expect(page.locator('#outcome.refused').textContent()).resolves.toMatch(/^The console answered 404: 1205 /);
  });

  it('lists users and devices, and reads well on a phone', async () => {
    await page.goto(`${server.url}/console/users`);
    await shoot('users');
    await page.goto(`${server.url}/console/devices`);
    await expect(page.locator('main').textContent()).resolves.toContain('Bedroom AC');
    await shoot('devices');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${server.url}/console/devices/${washer}`);
    const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await shoot('device-phone');
  });

  it("takes its live stream up again after an answer that was no stream (a proxy's 502 while the console restarts)", async () => {
    await page.setViewportSize({ width: 1100, height: 800 });
    const stream = `**/console/devices/${fridge}/events`;
    let answered = 0;
    await page.route(stream, async (route) => {
      if (answered++ === 0) await route.fulfill({ status: 502, contentType: 'text/html', body: '<h1>502 Bad Gateway</h1>' });
      else await route.continue();
    });
    await page.goto(`${server.url}/console/devices/${fridge}`);
    await page.locator('#live.stale').waitFor();
    await page.locator('#live:not(.stale)').waitFor({ timeout: 15_000 });
    await admin('POST', `/admin/devices/${fridge}/sim`, { action: 'open-door' });
    await until('the door open on the page', async () => ((await page.locator('td[data-path$="doorState"]').first().textContent()) === 'OPEN' ? true : undefined));
    await admin('POST', `/admin/devices/${fridge}/sim`, { action: 'close-door' });
    await page.unroute(stream);
  });

  it('marks a live view whose stream broke, says so when its session has ended, and keeps the focus on the button', async () => {
    await page.setViewportSize({ width: 1100, height: 800 });
    // The page's stream of status events cannot connect: what it shows may be out of date.
    const stream = `**/console/devices/${fridge}/events`;
    await page.route(stream, (route) => route.abort());
    await page.goto(`${server.url}/console/devices/${fridge}`);
    await page.locator('#live.stale').waitFor();
    await shoot('device-not-live');
    await page.unroute(stream);
    await page.context().clearCookies();
    await page.click('button[name=action][value=open-door]');
    await expect(page.locator('#outcome.refused').textContent()).resolves.toContain('Your console session has ended');
    expect(await page.evaluate("document.activeElement && document.activeElement.getAttribute('value')")).toBe('open-door');
  });
});
