/**
 * Guessing an owner's password (DESIGN G's sign-in, hardened as J hardens the rest): after five
 * attempts for one email, both sign-in forms answer 429 with Retry-After, even for the right
 * password, until a minute has given one back; other owners sign in meanwhile, and a right
 * password before the limit clears the count.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoCountry } from '../../src/regions.js';
import { OwnerAgent } from '../helpers/owner-agent.js';
import { authorizationRequest, EMAIL, linkWorld, PASSWORD, type Setup } from './fixture.js';

let s: Setup;
beforeAll(async () => {
  s = await linkWorld();
  for (const email of ['neighbour@example.com', 'lodger@example.com', 'tenant@example.com']) await s.test.ctx.owners.createUser(demoCountry(s.test.ctx.config.region), { email, password: PASSWORD });
}, 60_000);
afterAll(() => s?.test.close());

/** The /account sign-in form, fetched afresh (its CSRF field), submitted with these credentials. */
async function signInToAccount(agent: OwnerAgent, email: string, password: string) {
  const page = await agent.follow(`${s.base}/account`);
  const hidden = Object.fromEntries([...page.html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]));
  const response = await agent.request(`${s.base}/account/sign-in`, { form: { ...hidden, email, password } });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), html: await response.text() };
}

describe('sign-in attempts per email', () => {
  it('refuses the sixth attempt in a row at /account, the right password too, and names the wait', async () => {
    const agent = new OwnerAgent(s.base);
    for (let i = 0; i < 5; i++) {
      const wrong = await signInToAccount(agent, EMAIL, 'not the password');
      expect(wrong.status).toBe(401);
      expect(wrong.html).toContain('The email or the password is wrong.');
      expect(wrong.html).toContain(`value="${EMAIL}"`);
    }
    const refused = await signInToAccount(agent, ` ${EMAIL.toUpperCase()} `, PASSWORD);
    expect(refused.status).toBe(429);
    expect(Number(refused.retryAfter)).toBeGreaterThan(0);
    expect(Number(refused.retryAfter)).toBeLessThanOrEqual(60);
    expect(refused.html).toContain('Too many sign-in attempts for this email; try again in');
    expect(refused.html).not.toContain('Linked services');

    // Another owner is not held back by it.
    const neighbour = await signInToAccount(new OwnerAgent(s.base), 'neighbour@example.com', PASSWORD);
    expect(neighbour.status).toBe(303);
  });

  it('holds for the authorization’s sign-in step too, which shares the count', async () => {
    for (let i = 0; i < 5; i++) expect((await signInToAccount(new OwnerAgent(s.base), 'lodger@example.com', 'not the password')).status).toBe(401);
    const { url } = await authorizationRequest(s, 'devices');
    const agent = new OwnerAgent(s.base);
    const signIn = await agent.follow(url.href);
    const refused = await agent.submit(signIn, /\/login$/, { email: 'lodger@example.com', password: PASSWORD });
    expect(refused.status).toBe(429);
    expect(refused.html).toContain('value="lodger@example.com"');
    expect(refused.html).toContain('Too many sign-in attempts for this email');
  });

  it('clears the count when the right password comes before the limit', async () => {
    const agent = new OwnerAgent(s.base);
    for (let i = 0; i < 4; i++) expect((await signInToAccount(agent, 'neighbour@example.com', 'not the password')).status).toBe(401);
    expect((await signInToAccount(agent, 'neighbour@example.com', PASSWORD)).status).toBe(303);
    for (let i = 0; i < 5; i++) expect((await signInToAccount(new OwnerAgent(s.base), 'neighbour@example.com', 'not the password')).status).toBe(401);
  });
});

describe('sign-ins at once', () => {
  it('refuses those past what the node checks and lines up, at once and with Retry-After, and then signs the owner in', async () => {
    const agent = new OwnerAgent(s.base);
    const page = await agent.follow(`${s.base}/account`);
    const hidden = Object.fromEntries([...page.html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]));
    // A spray of made-up emails, each new to the per-email buckets: two checked at once, 32 in line.
    const answers = await Promise.all(
      Array.from({ length: 60 }, async (_, i) => {
        const response = await agent.request(`${s.base}/account/sign-in`, { form: { ...hidden, email: `made-up-${i}@example.com`, password: 'a guess' } });
        return { status: response.status, retryAfter: response.headers.get('retry-after'), html: await response.text() };
      }),
    );
    const busy = answers.filter((answer) => answer.status === 429);
    expect(busy.length).toBeGreaterThan(0);
    for (const answer of busy) {
      expect(answer.retryAfter).toBe('1');
      expect(answer.html).toContain('Too many sign-ins at once; try again in a second.');
    }
    expect(answers.filter((answer) => answer.status === 401).length).toBeGreaterThanOrEqual(34);
    expect(answers.length - busy.length).toBe(answers.filter((answer) => answer.status === 401).length);

    expect((await signInToAccount(new OwnerAgent(s.base), 'tenant@example.com', PASSWORD)).status).toBe(303);
  });
});

describe('the sign-in forms', () => {
  it('refuse a form over 16 KiB with 413, naming that bound', async () => {
    const response = await fetch(`${s.base}/account/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email: EMAIL, password: 'x'.repeat(20_000) }).toString(),
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: unknown }).error).toEqual({ code: '1102', message: 'The form is larger than 16 KiB.' });
  });
});
