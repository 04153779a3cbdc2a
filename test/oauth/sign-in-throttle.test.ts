/**
 * Sign-in attempts per email: five at once, then one a minute; the right password forgives. And the
 * node's password checks: a few at once, a bounded line behind them.
 */
import { describe, expect, it } from 'vitest';
import { HashGate, SignInThrottle } from '../../src/oauth/sign-in-throttle.js';

const MINUTE = 60_000;

describe('SignInThrottle', () => {
  it('allows five attempts, then refuses with the wait until the next one', () => {
    const throttle = new SignInThrottle();
    for (let i = 0; i < 5; i++) expect(throttle.take('owner@example.com', 0)).toEqual({ allowed: true });
    expect(throttle.take('owner@example.com', 0)).toEqual({ allowed: false, retryAfterSeconds: 60 });
    expect(throttle.take('owner@example.com', 45_000)).toEqual({ allowed: false, retryAfterSeconds: 15 });
  });

  it('gives back one attempt a minute', () => {
    const throttle = new SignInThrottle();
    for (let i = 0; i < 5; i++) throttle.take('owner@example.com', 0);
    expect(throttle.take('owner@example.com', MINUTE).allowed).toBe(true);
    expect(throttle.take('owner@example.com', MINUTE).allowed).toBe(false);
    expect(throttle.take('owner@example.com', 3 * MINUTE).allowed).toBe(true);
    expect(throttle.take('owner@example.com', 3 * MINUTE).allowed).toBe(true);
    expect(throttle.take('owner@example.com', 3 * MINUTE).allowed).toBe(false);
  });

  it('counts each email on its own', () => {
    const throttle = new SignInThrottle();
    for (let i = 0; i < 6; i++) throttle.take('owner@example.com', 0);
    expect(throttle.take('other@example.com', 0).allowed).toBe(true);
  });

  it('forgets an email once its owner signed in', () => {
    const throttle = new SignInThrottle();
    for (let i = 0; i < 6; i++) throttle.take('owner@example.com', 0);
    throttle.forgive('owner@example.com');
    for (let i = 0; i < 5; i++) expect(throttle.take('owner@example.com', 0).allowed).toBe(true);
  });

  it('counts an email past 320 characters by its first 320, so that no key is larger', () => {
    const throttle = new SignInThrottle();
    const long = `${'a'.repeat(320)}@example.com`;
    for (let i = 0; i < 5; i++) throttle.take(`${long}${i}`, 0);
    expect(throttle.take(long, 0).allowed).toBe(false);
    throttle.forgive(`${long}x`);
    expect(throttle.take(long, 0).allowed).toBe(true);
  });

  it('keeps a bounded number of emails, dropping those that tell least: a spray of new emails does not free the one being guessed', () => {
    const throttle = new SignInThrottle();
    for (let i = 0; i < 6; i++) throttle.take('first@example.com', 0);
    for (let i = 0; i < 10_000; i++) throttle.take(`spray-${i}@example.com`, 0);
    expect(throttle.take('first@example.com', 0).allowed).toBe(false);
    // Once its own minute gave it a try back, it is a bucket like the others, and as bounded.
    expect(throttle.take('first@example.com', 60_000).allowed).toBe(true);
  });
});

/** A check that ends when told to. */
function pending(log: string[], name: string) {
  let end!: () => void;
  const done = new Promise<void>((resolve) => (end = resolve));
  return {
    check: async () => {
      log.push(`start ${name}`);
      await done;
      log.push(`end ${name}`);
      return name;
    },
    end: () => end(),
  };
}

describe('HashGate', () => {
  it('runs two checks at once, lines up the rest in turn, and is full once its line is', async () => {
    const gate = new HashGate(2, 2);
    const log: string[] = [];
    const checks = ['a', 'b', 'c', 'd'].map((name) => pending(log, name));
    const results = checks.map(({ check }) => gate.run(check));
    await Promise.resolve();
    expect(log).toEqual(['start a', 'start b']);
    expect(gate.full).toBe(true);

    checks[1]!.end();
    expect(await results[1]).toBe('b');
    await new Promise((resolve) => setImmediate(resolve));
    expect(log).toEqual(['start a', 'start b', 'end b', 'start c']);
    expect(gate.full).toBe(false);

    for (const { end } of checks) end();
    expect(await Promise.all(results)).toEqual(['a', 'b', 'c', 'd']);
    expect(gate.full).toBe(false);
  });

  it('frees the place of a check that failed', async () => {
    const gate = new HashGate(1, 0);
    await expect(gate.run(() => Promise.reject(new Error('store down')))).rejects.toThrow('store down');
    expect(gate.full).toBe(false);
    expect(await gate.run(async () => 'next')).toBe('next');
  });
});
