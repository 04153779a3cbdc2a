/**
 * The owner's pages in a real browser (Debian's Chromium through playwright-core): signing in and
 * consenting to a subset of devices by keyboard-reachable labels, then /account, where a rename and
 * an unlink take effect; the service sees exactly the consented devices, then nothing (1202). A
 * service the operator linked with an admin token is listed there too, and unlinked the same way.
 * Past five wrong passwords for one email, the sign-in page says how long to wait. A device ticked
 * with the default "All of them" left selected is shared alone. No page can be framed by another.
 */
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as client from 'openid-client';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoCountry } from '../../src/regions.js';
import { hasChromium, launchBrowser } from '../helpers/browser.js';
import { authorizationRequest, EMAIL, linkWorld, partner, PASSWORD, type Setup } from './fixture.js';

/** Where the pages' screenshots go, to be looked at. */
const SHOTS = join(tmpdir(), 'appliance-cloud-oauth-pages');

describe.skipIf(!hasChromium)('the owner pages in a browser', () => {
  let s: Setup;
  let browser: Browser;
  beforeAll(async () => {
    [s, browser] = await Promise.all([linkWorld(), launchBrowser()]);
    mkdirSync(SHOTS, { recursive: true });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await s?.test.close();
  });

  /** Opens an authorization request for `scope` (state `st`) and signs in as the owner, up to the consent page; its PKCE verifier. */
  async function signInToAuthorize(page: Page, scope: string): Promise<string> {
    const { url, verifier } = await authorizationRequest(s, scope, 'st');
    await page.goto(url.href);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Laundry Pal asks to link your appliances' }).waitFor();
    return verifier;
  }

  it('consents to one device, renames it, and unlinks', async () => {
    const page = await browser.newPage();
    const verifier = await signInToAuthorize(page, 'devices control');
    // Only the devices of the service's types are offered: not the oven.
    expect(await page.getByRole('checkbox').count()).toBe(2);
    await page.getByLabel('Only the ones I choose').check();
    await page.getByLabel(/^Washer/).focus();
    await page.keyboard.press('Space');
    await page.screenshot({ path: join(SHOTS, 'consent.png'), fullPage: true });
    await Promise.all([page.waitForURL((u) => u.pathname === '/partner/callback'), page.getByRole('button', { name: 'Allow' }).click()]);

    const tokens = await client.authorizationCodeGrant(s.config, new URL(page.url()), { pkceCodeVerifier: verifier, expectedState: 'st' });
    const listed = await partner(s, 'GET', '/devices', tokens.access_token);
    expect(listed.json().response.map((d: { deviceId: string }) => d.deviceId)).toEqual([s.washer]);

    await page.goto(`${s.base}/account`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Linked services' }).waitFor();
    const row = page.getByRole('row', { name: /Laundry Pal/ });
    expect(await row.textContent()).toContain('devices, control');
    expect(await row.textContent()).toContain('Washer');

    await page.getByLabel('New name for Washer').fill('Basement washer');
    await page.getByLabel('New name for Washer').press('Enter');
    await page.getByRole('cell', { name: 'Basement washer', exact: true }).first().waitFor();
    expect((await s.test.ctx.store.getDevice(s.washer))?.alias).toBe('Basement washer');
    await page.screenshot({ path: join(SHOTS, 'account.png'), fullPage: true });

    await page.getByRole('button', { name: 'Unlink Laundry Pal' }).click();
    await page.getByText('No service is linked to your appliances.').waitFor();
    expect((await partner(s, 'GET', '/devices', tokens.access_token)).json().error.code).toBe('1202');
  });

  it('lists a service the operator linked with an admin token, with every scope, and unlinks it', async () => {
    const { service, serviceKey } = await s.test.ctx.accounts.createService({ name: 'Oven Watch', allowedDevices: ['DEVICE_OVEN'] });
    const ovenWatch = { ...s, serviceId: service.serviceId, serviceKey };
    const { accessToken } = await s.test.ctx.accounts.issueToken(s.userNumber, service.serviceId);
    expect((await partner(ovenWatch, 'GET', '/devices', accessToken)).statusCode).toBe(200);

    const page = await browser.newPage();
    await page.goto(`${s.base}/account`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Linked services' }).waitFor();
    const row = await page.getByRole('row', { name: /Oven Watch/ }).textContent();
    expect(row).toContain('linked by the operator, not by your consent');
    expect(row).toContain('devices, control, push, events');
    await page.screenshot({ path: join(SHOTS, 'account-operator-link.png'), fullPage: true });

    await page.getByRole('button', { name: 'Unlink Oven Watch' }).click();
    await page.getByText('No service is linked to your appliances.').waitFor();
    expect((await partner(ovenWatch, 'GET', '/devices', accessToken)).json().error.code).toBe('1202');
  });

  it('says how long to wait once an email had five wrong passwords', async () => {
    const email = 'guessed@example.com';
    await s.test.ctx.owners.createUser(demoCountry(s.test.ctx.config.region), { email, password: PASSWORD });
    const page = await browser.newPage();
    let status = 0;
    for (let attempt = 0; attempt < 6; attempt++) {
      await page.goto(`${s.base}/account`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(attempt < 5 ? `not the password ${attempt}` : PASSWORD);
      const [answer] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/account/sign-in')), page.getByRole('button', { name: 'Sign in' }).click()]);
      status = answer.status();
    }
    expect(status).toBe(429);
    expect(await page.getByRole('alert').textContent()).toMatch(/^Too many sign-in attempts for this email; try again in \d+ seconds\.$/);
    await page.screenshot({ path: join(SHOTS, 'sign-in-throttled.png'), fullPage: true });
  });

  it('refuses to be shown in a frame of another page, where a click on Allow or Unlink could be stolen', async () => {
    const { url } = await authorizationRequest(s, 'devices');
    const page = await browser.newPage();
    for (const framed of [url.href, `${s.base}/oauth/device`, `${s.base}/account`]) {
      await page.setContent(`<iframe src="${framed}"></iframe>`);
      const frame = page.frames()[1]!;
      await frame.waitForLoadState();
      // Chromium shows its own error page in place of a page that forbids framing.
      expect(frame.url(), framed).toBe('chrome-error://chromewebdata/');
    }
  });

  it("shares only the devices ticked, even when the owner left the default 'All of them' selected", async () => {
    const page = await browser.newPage();
    const verifier = await signInToAuthorize(page, 'devices');
    // The owner ticks the fridge under "Only the ones I choose" and allows, never touching the radio buttons.
    await page.getByLabel(/^Fridge/).check();
    expect(await page.getByLabel('All of them, including devices I add later').isChecked()).toBe(true);
    await Promise.all([page.waitForURL((u) => u.pathname === '/partner/callback'), page.getByRole('button', { name: 'Allow' }).click()]);

    const tokens = await client.authorizationCodeGrant(s.config, new URL(page.url()), { pkceCodeVerifier: verifier, expectedState: 'st' });
    const listed = await partner(s, 'GET', '/devices', tokens.access_token);
    expect(listed.json().response.map((d: { deviceId: string }) => d.deviceId)).toEqual([s.fridge]);
    await s.test.ctx.owners.unlink(s.userNumber, s.serviceId);
  });
});
