import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret, signatureHeaders, verify } from '../../src/delivery/sign.js';
import { newMessageId, type Clock } from '../../src/ids.js';

const at = (epochSeconds: number): Clock => ({ now: () => epochSeconds * 1000 });
const nowSeconds = (): number => Math.floor(Date.now() / 1000);

// The published Standard Webhooks / Svix test vector.
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  messageId: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

describe('newWebhookSecret', () => {
  it('is whsec_ and the base64 of 32 random bytes', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(secret);
  });
});

describe('signatureHeaders', () => {
  it('reproduces the published test vector', () => {
    const { secret, messageId, timestamp, body, signature } = VECTOR;
    expect(signatureHeaders({ messageId, timestamp, body, secrets: [secret] })).toEqual({
      'webhook-id': messageId,
      'webhook-timestamp': '1614265330',
      'webhook-signature': signature,
    });
  });

  it('produces signatures the public standardwebhooks verifier accepts', () => {
    fc.assert(
      fc.property(fc.json(), fc.string({ unit: 'grapheme' }), (json, text) => {
        const secret = newWebhookSecret();
        for (const body of [json, JSON.stringify({ text })]) {
          const headers = signatureHeaders({ messageId: newMessageId(), timestamp: nowSeconds(), body, secrets: [secret] });
          expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
        }
      }),
      { numRuns: 50 },
    );
  });

  it('signs with every secret during a rotation, and each one alone verifies', () => {
    const [oldSecret, newSecret] = [newWebhookSecret(), newWebhookSecret()];
    const body = '{"push":{"pushType":"DEVICE_PUSH","pushCode":"WASHING_IS_COMPLETE","alias":"세탁기 🧺"}}';
    const headers = signatureHeaders({ messageId: newMessageId(), timestamp: nowSeconds(), body, secrets: [oldSecret, newSecret] });

    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    for (const secret of [oldSecret, newSecret]) {
      expect(() => new Webhook(secret).verify(body, { ...headers })).not.toThrow();
      expect(verify({ body, headers: { ...headers }, secrets: [secret], clock: at(nowSeconds()) })).toEqual({ ok: true });
    }
    expect(() => new Webhook(newWebhookSecret()).verify(body, { ...headers })).toThrow(/No matching signature/);
  });

  it('refuses a malformed secret, no secret, and a timestamp that is not whole seconds', () => {
    const input = { messageId: 'm', timestamp: 1, body: '{}' };
    expect(() => signatureHeaders({ ...input, secrets: ['MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] })).toThrow(/whsec_/);
    expect(() => signatureHeaders({ ...input, secrets: ['whsec_not base64!'] })).toThrow(/whsec_/);
    expect(() => signatureHeaders({ ...input, secrets: [] })).toThrow(/at least one/);
    expect(() => signatureHeaders({ ...input, timestamp: 1.5, secrets: [VECTOR.secret] })).toThrow(RangeError);
  });
});

describe('verify', () => {
  const { secret, messageId, timestamp, body } = VECTOR;
  const headers = { ...signatureHeaders({ messageId, timestamp, body, secrets: [secret] }) };
  const check = (overrides: Partial<Parameters<typeof verify>[0]>) =>
    verify({ body, headers, secrets: [secret], clock: at(timestamp), ...overrides });

  it('accepts the test vector at its own time, with header names in any case', () => {
    expect(check({})).toEqual({ ok: true });
    const shouted = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toUpperCase(), value]));
    expect(check({ headers: shouted })).toEqual({ ok: true });
  });

  it('accepts when any presented v1 signature matches, ignoring other versions', () => {
    const signature = `v2,abc v1,bm9wZQ== ${headers['webhook-signature']}`;
    expect(check({ headers: { ...headers, 'webhook-signature': signature } })).toEqual({ ok: true });
  });

  it('refuses a tampered body, a tampered timestamp, or another secret', () => {
    expect(check({ body: '{"test": 2432232315}' })).toEqual({ ok: false, reason: 'no-matching-signature' });
    expect(check({ headers: { ...headers, 'webhook-timestamp': String(timestamp + 1) } })).toEqual({
      ok: false,
      reason: 'no-matching-signature',
    });
    expect(check({ secrets: [newWebhookSecret()] })).toEqual({ ok: false, reason: 'no-matching-signature' });
  });

  it('refuses outside the tolerance window, and honours a custom one', () => {
    expect(check({ clock: at(timestamp + 301) })).toEqual({ ok: false, reason: 'timestamp-too-old' });
    expect(check({ clock: at(timestamp - 301) })).toEqual({ ok: false, reason: 'timestamp-too-new' });
    expect(check({ clock: at(timestamp + 300) })).toEqual({ ok: true });
    expect(check({ clock: at(timestamp + 60), toleranceSeconds: 30 })).toEqual({ ok: false, reason: 'timestamp-too-old' });
  });

  it('refuses missing headers and a timestamp that is not unix seconds', () => {
    const { 'webhook-id': _id, ...withoutId } = headers;
    expect(check({ headers: withoutId })).toEqual({ ok: false, reason: 'missing-headers' });
    expect(check({ headers: { ...headers, 'webhook-timestamp': '1614265330.5' } })).toEqual({ ok: false, reason: 'bad-timestamp' });
  });
});
