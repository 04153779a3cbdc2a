/**
 * "Try it out" in /docs, driven in Chromium against the sandbox's world (DESIGN E, issue 19 item 1):
 * the page is ours, the sandbox's credentials are entered under Authorize, Execute on GET /devices
 * answers the user's devices, and each request carries a fresh x-message-id.
 */
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isMessageId } from '../../src/ids.js';
import { seedSandbox, type SandboxWorld } from '../../src/sandbox/world.js';
import { ICON } from '../../src/web/html.js';
import { ADMIN_TOKEN, testApp, type TestApp } from '../helpers/app.js';
import { hasChromium, launchBrowser } from '../helpers/browser.js';

/** Where the test leaves its screenshots, to look at: the top of the page, and the answer after Execute. */
const SCREENSHOTS = { top: join(tmpdir(), 'appliance-cloud-docs-top.png'), answer: join(tmpdir(), 'appliance-cloud-docs-try-it-out.png') };

describe('the docs page\'s own routes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
  });
  afterAll(() => t.close());

  it('GET / leads to /docs', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/' });
    expect([res.statusCode, res.headers.location]).toEqual([302, '/docs']);
  });

  it('presets no credentials until the sandbox gives its own, then those three', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/docs/try-it-out.json' })).json()).toEqual({});
    t.tryItOut.preset({ accessToken: 'token', serviceId: 'svc', serviceKey: 'key' });
    expect((await t.app.inject({ method: 'GET', url: '/docs/try-it-out.json' })).json()).toEqual({ accessToken: 'token', serviceId: 'svc', serviceKey: 'key' });
  });

  it('serves its script, style and logo from the process', async () => {
    const page = (await t.app.inject({ method: 'GET', url: '/docs/' })).body;
    for (const asset of ['theme/try-it-out.js', 'theme/theme.css', 'theme/logo.svg']) {
      expect(page).toContain(asset);
      expect((await t.app.inject({ method: 'GET', url: `/docs/static/${asset}` })).statusCode, asset).toBe(200);
    }
    // The icon every other page links to (src/web/html.ts).
    expect((await t.app.inject({ method: 'GET', url: ICON })).headers['content-type']).toBe('image/svg+xml');
  });
});

describe.skipIf(!hasChromium)('/docs in a browser, in the sandbox world', () => {
  let t: TestApp;
  let world: SandboxWorld;
  let url: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    t = await testApp();
    world = await seedSandbox(t.ctx, null, { adminToken: ADMIN_TOKEN });
    const { accessToken, serviceId, serviceKey } = world.credentials;
    t.tryItOut.preset({ accessToken, serviceId, serviceKey });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** Clicks Execute on the open operation and gives back the request the page sent and its answer. */
  async function execute(operation: ReturnType<Page['locator']>): Promise<{ request: Request; body: { response: { deviceId: string }[] } }> {
    const [response] = await Promise.all([
      page.waitForResponse((r) => new URL(r.url()).pathname === '/devices' && r.request().method() === 'GET'),
      operation.locator('button.execute').click(),
    ]);
    expect(response.status()).toBe(200);
    return { request: response.request(), body: await response.json() };
  }

  it('GET / leads to /docs, a page under our name and logo, served by the process', async () => {
    await page.goto(url);
    expect(new URL(page.url()).pathname).toMatch(/^\/docs\/?$/);
    await page.locator('.information-container .title').waitFor();
    expect(await page.title()).toBe('appliance-cloud — Home Appliance Cloud Interface');
    expect(await page.locator('.information-container .title').innerText()).toContain('Home Appliance Cloud Interface');
    expect(await page.locator('.topbar a img').getAttribute('src')).toMatch(/^data:image\/svg\+xml;base64,/);
    await page.screenshot({ path: SCREENSHOTS.top });
  });

  it('fits a phone: no part of the page is wider than a 390 px screen', async () => {
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await phone.goto(`${url}/docs`);
    await phone.locator('.information-container .title').waitFor();
    await phone.locator('#operations-devices-listDevices .opblock-summary').click();
    expect(await phone.evaluate('document.documentElement.scrollWidth')).toBe(390);
    await phone.close();
  });

  it('"Try it out" → Execute on GET /devices returns the user\'s devices, with the preset credentials and a fresh x-message-id each time', async () => {
    await page.goto(`${url}/docs`);
    // Authorize shows the three credentials as entered: the padlock of the operation is closed.
    const operation = page.locator('#operations-devices-listDevices');
    await operation.locator('.opblock-summary').click();
    await operation.locator('button.try-out__btn').click();
    const first = await execute(operation);
    const second = await execute(operation);

    const devices = first.body.response.map((d) => d.deviceId).sort();
    expect(devices).toEqual(world.devices.map((d) => d.deviceId).sort());
    const headers = await first.request.allHeaders();
    expect(headers['authorization']).toBe(`Bearer ${world.credentials.accessToken}`);
    expect(headers['x-service-id']).toBe(world.credentials.serviceId);
    expect(headers['x-service-key']).toBe(world.credentials.serviceKey);
    expect(headers['x-country-code']).toBe(world.countryCode);
    const ids = [headers['x-message-id'], (await second.request.allHeaders())['x-message-id']];
    expect(ids.every((id) => id !== undefined && isMessageId(id))).toBe(true);
    expect(new Set([...ids, 'kVuV69kGTS25FUs1wrkECQ']).size).toBe(3);
    // The page shows the answer too.
    const status = operation.locator('.live-responses-table tbody .response-col_status').first();
    await expect.poll(() => status.innerText()).toContain('200');
    await status.scrollIntoViewIfNeeded();
    await page.screenshot({ path: SCREENSHOTS.answer });
  }, 60_000);
});
