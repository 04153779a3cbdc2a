import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEVICE_TYPES } from '../../src/catalog/index.js';
import { ROTATION_OVERLAP_MS } from '../../src/core/accounts.js';
import { formatTimestamp, newMessageId, type Clock } from '../../src/ids.js';
import { adminHeaders, callAdmin, createWorld, testApp, type TestApp } from '../helpers/app.js';

const NOW = Date.UTC(2026, 0, 1);

describe('admin: services (DESIGN D)', () => {
  let t: TestApp;
  let now = NOW;
  const clock: Clock = { now: () => now };

  beforeEach(async () => {
    now = NOW;
    t = await testApp({ clock });
  });
  afterEach(() => t.close());

  const create = (body: unknown) => callAdmin(t.app, 'POST', '/admin/services', body);
  const washerService = { name: 'Washer partner', allowedDevices: ['DEVICE_WASHER'], callbackUrl: 'https://partner.example/hooks' };

  describe('POST /admin/services', () => {
    it('answers the id, the key and the webhook secret, once, in the envelope', async () => {
      const res = await create(washerService);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body).toEqual({
        messageId: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
        timestamp: formatTimestamp(NOW),
        response: { serviceId: expect.stringMatching(/^svc_/), serviceKey: expect.any(String), webhookSecret: expect.stringMatching(/^whsec_/) },
      });
      const stored = await t.ctx.store.getService(body.response.serviceId);
      expect(stored!.webhookSecrets[0]!.secret).toBe(body.response.webhookSecret);
    });

    it('creates a service the partner interface accepts with that key', async () => {
      const world = await createWorld(t.ctx);
      const { serviceId, serviceKey } = (await create({ name: 'p', allowedDevices: [...DEVICE_TYPES] })).json().response;
      const token = (await callAdmin(t.app, 'POST', `/admin/users/${world.userNumber}/tokens`, { serviceId })).json().response.accessToken;
      const res = await t.app.inject({
        method: 'GET', url: '/users',
        headers: { ...world.headers(), 'x-service-id': serviceId, 'x-service-key': serviceKey, authorization: token },
      });
      expect(res.json().response).toEqual({ userNumber: world.userNumber });
    });

    it.each([
      [{ allowedDevices: [] }, '1101', 'name is missing.'],
      [{ name: 'x' }, '1101', 'allowedDevices is missing.'],
      [{ name: '', allowedDevices: [] }, '1102', 'name must NOT have fewer than 1 characters.'],
      [{ name: 'x', allowedDevices: 'DEVICE_WASHER' }, '1102', 'allowedDevices must be array.'],
      [{ name: 'x', allowedDevices: ['DEVICE_TOASTER'] }, '1102', `allowedDevices.0 must be one of ${DEVICE_TYPES.join(', ')}.`],
      [{ name: 'x', allowedDevices: [], callbackUrl: 'ftp://partner.example' }, '1102', 'callbackUrl must be an http or https URL; got "ftp://partner.example".'],
      [{ name: 'x', allowedDevices: [], eventCallbackUrl: 'not a url' }, '1102', 'eventCallbackUrl must be an absolute http(s) URL; got "not a url".'],
      [{ name: 'x', allowedDevices: [], serviceKey: 'mine' }, '1102', 'body may not contain "serviceKey".'],
    ])('%j answers %s', async (body, code, message) => {
      const res = await create(body);
      expect([res.statusCode, res.json().error]).toEqual([400, { code, message }]);
      expect(await t.ctx.store.listServices()).toEqual([]);
    });
  });

  describe('GET /admin/services and /admin/services/{id}', () => {
    it('show the services without key hash or webhook secrets', async () => {
      const { serviceId } = (await create(washerService)).json().response;
      const view = {
        serviceId,
        name: 'Washer partner',
        allowedDevices: ['DEVICE_WASHER'],
        callbackUrl: 'https://partner.example/hooks',
        eventCallbackUrl: null,
        redirectUris: [],
        enabled: true,
        createdAt: new Date(NOW).toISOString(),
      };
      expect((await callAdmin(t.app, 'GET', '/admin/services')).json().response).toEqual([view]);
      const one = await callAdmin(t.app, 'GET', `/admin/services/${serviceId}`);
      expect(one.json().response).toEqual(view);
      expect(one.body).not.toMatch(/whsec_|keyHash|webhookSecret/);
    });

    it('an unknown service answers 1305 (404)', async () => {
      const res = await callAdmin(t.app, 'GET', '/admin/services/svc_nobody');
      expect([res.statusCode, res.json().error]).toEqual([404, { code: '1305', message: 'Service svc_nobody does not exist.' }]);
    });
  });

  describe('PATCH /admin/services/{id}', () => {
    it('changes the fields given and answers the service', async () => {
      const { serviceId } = (await create(washerService)).json().response;
      const res = await callAdmin(t.app, 'PATCH', `/admin/services/${serviceId}`, {
        name: 'Renamed', allowedDevices: ['DEVICE_DRYER', 'DEVICE_WASHER'], eventCallbackUrl: 'https://partner.example/events', callbackUrl: null,
      });
      expect(res.json().response).toEqual({
        serviceId,
        name: 'Renamed',
        allowedDevices: ['DEVICE_DRYER', 'DEVICE_WASHER'],
        callbackUrl: null,
        eventCallbackUrl: 'https://partner.example/events',
        redirectUris: [],
        enabled: true,
        createdAt: new Date(NOW).toISOString(),
      });
    });

    it('keeps each allowed type once, as POST does', async () => {
      const { serviceId } = (await create({ ...washerService, allowedDevices: ['DEVICE_WASHER', 'DEVICE_WASHER'] })).json().response;
      expect((await callAdmin(t.app, 'GET', `/admin/services/${serviceId}`)).json().response.allowedDevices).toEqual(['DEVICE_WASHER']);
      const res = await callAdmin(t.app, 'PATCH', `/admin/services/${serviceId}`, { allowedDevices: ['DEVICE_DRYER', 'DEVICE_WASHER', 'DEVICE_DRYER'] });
      expect(res.json().response.allowedDevices).toEqual(['DEVICE_DRYER', 'DEVICE_WASHER']);
      expect((await t.ctx.store.getService(serviceId))!.allowedDevices).toEqual(['DEVICE_DRYER', 'DEVICE_WASHER']);
    });

    it('sets the OAuth redirect URIs: https, or http to loopback in phase QA; others answer 1102 (DESIGN G)', async () => {
      const { serviceId } = (await create(washerService)).json().response;
      const uris = ['https://partner.example/cb', 'http://127.0.0.1:9000/cb'];
      const res = await callAdmin(t.app, 'PATCH', `/admin/services/${serviceId}`, { redirectUris: uris });
      expect(res.json().response.redirectUris).toEqual(uris);
      const refused = await callAdmin(t.app, 'PATCH', `/admin/services/${serviceId}`, { redirectUris: ['http://partner.example/cb'] });
      expect([refused.statusCode, refused.json().error.code]).toEqual([400, '1102']);
      expect((await callAdmin(t.app, 'GET', `/admin/services/${serviceId}`)).json().response.redirectUris).toEqual(uris);
    });

    it('enabled: false makes the partner interface refuse the service with 1301', async () => {
      const world = await createWorld(t.ctx);
      expect((await callAdmin(t.app, 'PATCH', `/admin/services/${world.serviceId}`, { enabled: false })).json().response.enabled).toBe(false);
      const refused = await t.app.inject({ method: 'GET', url: '/users', headers: world.headers() });
      expect([refused.statusCode, refused.json().error.code]).toEqual([401, '1301']);
      await callAdmin(t.app, 'PATCH', `/admin/services/${world.serviceId}`, { enabled: true });
      expect((await t.app.inject({ method: 'GET', url: '/users', headers: world.headers() })).statusCode).toBe(200);
    });

    it('refuses bad values with 1102 and an unknown service with 1305', async () => {
      const { serviceId } = (await create(washerService)).json().response;
      const bad = await callAdmin(t.app, 'PATCH', `/admin/services/${serviceId}`, { enabled: 'yes' });
      expect([bad.statusCode, bad.json().error]).toEqual([400, { code: '1102', message: 'enabled must be boolean.' }]);
      const extra = await callAdmin(t.app, 'PATCH', `/admin/services/${serviceId}`, { serviceId: 'svc_other' });
      expect(extra.json().error).toEqual({ code: '1102', message: 'body may not contain "serviceId".' });
      const unknown = await callAdmin(t.app, 'PATCH', '/admin/services/svc_nobody', { name: 'x' });
      expect([unknown.statusCode, unknown.json().error]).toEqual([404, { code: '1305', message: 'Service svc_nobody does not exist.' }]);
    });
  });

  describe('POST /admin/services/{id}/rotate-secret', () => {
    it('answers a new secret; the previous one keeps signing for 24 h', async () => {
      const { serviceId, webhookSecret: first } = (await create(washerService)).json().response;
      now += 1000;
      const res = await callAdmin(t.app, 'POST', `/admin/services/${serviceId}/rotate-secret`);
      const { webhookSecret } = res.json().response;
      expect(webhookSecret).toMatch(/^whsec_/);
      expect(webhookSecret).not.toBe(first);
      const secrets = (await t.ctx.store.getService(serviceId))!.webhookSecrets;
      expect(secrets.map((s) => [s.secret, s.expiresAt])).toEqual([[webhookSecret, null], [first, now + ROTATION_OVERLAP_MS]]);
    });

    it('takes an empty body sent as application/json, as many clients send a POST without one', async () => {
      const { serviceId } = (await create(washerService)).json().response;
      const res = await t.app.inject({
        method: 'POST',
        url: `/admin/services/${serviceId}/rotate-secret`,
        headers: adminHeaders({ 'x-message-id': newMessageId(), 'content-type': 'application/json' }),
      });
      expect([res.statusCode, res.json().response.webhookSecret]).toEqual([200, expect.stringMatching(/^whsec_/)]);
    });

    it('keeps only the current and one previous secret: each rotation drops an older one at once (DESIGN J)', async () => {
      const { serviceId } = (await create(washerService)).json().response;
      const rotated: string[] = [];
      for (let i = 0; i < 5; i++) {
        now += 1000;
        rotated.push((await callAdmin(t.app, 'POST', `/admin/services/${serviceId}/rotate-secret`)).json().response.webhookSecret);
      }
      const secrets = (await t.ctx.store.getService(serviceId))!.webhookSecrets;
      expect(secrets.map((s) => [s.secret, s.expiresAt])).toEqual([[rotated[4], null], [rotated[3], now + ROTATION_OVERLAP_MS]]);
    });

    it('{"expirePreviousNow": true} retires the previous secret at once: only the new one is kept', async () => {
      const { serviceId } = (await create(washerService)).json().response;
      await callAdmin(t.app, 'POST', `/admin/services/${serviceId}/rotate-secret`);
      now += 1000;
      const res = await callAdmin(t.app, 'POST', `/admin/services/${serviceId}/rotate-secret`, { expirePreviousNow: true });
      expect(res.statusCode).toBe(200);
      const secrets = (await t.ctx.store.getService(serviceId))!.webhookSecrets;
      expect(secrets.map((s) => [s.secret, s.expiresAt])).toEqual([[res.json().response.webhookSecret, null]]);
      // false is the default: the previous one signs for 24 h more.
      const kept = await callAdmin(t.app, 'POST', `/admin/services/${serviceId}/rotate-secret`, { expirePreviousNow: false });
      expect((await t.ctx.store.getService(serviceId))!.webhookSecrets.map((s) => s.secret)).toEqual([kept.json().response.webhookSecret, secrets[0]!.secret]);
    });

    it.each([
      [{ expirePreviousNow: 'yes' }, 'expirePreviousNow must be boolean.'],
      [{ expireAll: true }, 'body may not contain "expireAll".'],
    ])('refuses the body %j with 1102 and rotates nothing', async (body, message) => {
      const { serviceId } = (await create(washerService)).json().response;
      const before = await t.ctx.store.getService(serviceId);
      const res = await callAdmin(t.app, 'POST', `/admin/services/${serviceId}/rotate-secret`, body);
      expect([res.statusCode, res.json().error]).toEqual([400, { code: '1102', message }]);
      expect(await t.ctx.store.getService(serviceId)).toEqual(before);
    });

    it('an unknown service answers 1305', async () => {
      const res = await callAdmin(t.app, 'POST', '/admin/services/svc_nobody/rotate-secret');
      expect([res.statusCode, res.json().error]).toEqual([404, { code: '1305', message: 'Service svc_nobody does not exist.' }]);
    });
  });
});

describe('admin: callback URLs are judged when set (DESIGN C, J)', () => {
  let t: TestApp;
  afterEach(() => t.close());
  const create = (body: unknown) => callAdmin(t.app, 'POST', '/admin/services', body);
  const patch = (serviceId: string, body: unknown) => callAdmin(t.app, 'PATCH', `/admin/services/${serviceId}`, body);
  const service = (urls: object) => ({ name: 'Partner', allowedDevices: ['DEVICE_WASHER'], ...urls });

  const refusedInOp = [
    ['callbackUrl', 'http://partner.example/hooks', 'phase OP accepts only https: callback URLs'],
    ['callbackUrl', 'https://127.0.0.1:8443/hooks', '127.0.0.1 is a loopback address, refused in phase OP'],
    ['eventCallbackUrl', 'https://10.1.2.3/events', '10.1.2.3 is a private address, refused in phase OP'],
    ['callbackUrl', 'https://[::1]/hooks', '::1 is a loopback address, refused in phase OP'],
    ['eventCallbackUrl', 'https://hooks.localhost/events', 'hooks.localhost is a loopback name (RFC 6761), refused in phase OP'],
    ['callbackUrl', 'https://[64:ff9b::a00:1]/hooks', '64:ff9b::a00:1 is a private address (10.0.0.1 inside), refused in phase OP'],
    ['eventCallbackUrl', 'https://169.254.169.254/latest', '169.254.169.254 is a link-local (cloud metadata) address, refused in phase OP'],
  ] as const;

  describe('phase OP', () => {
    beforeEach(async () => {
      t = await testApp({ settings: { PHASE: 'OP', DELIVERY_ALLOW_LIST: '192.168.7.0/24' } });
    });

    it.each(refusedInOp)('POST refuses %s %s with 1102 naming the problem, and creates nothing', async (field, url, reason) => {
      const res = await create(service({ [field]: url }));
      expect([res.statusCode, res.json().error]).toEqual([400, { code: '1102', message: `${field} "${url}" cannot receive messages: ${reason}.` }]);
      expect(await t.ctx.store.listServices()).toEqual([]);
    });

    it.each(refusedInOp)('PATCH refuses %s %s with 1102, and changes nothing', async (field, url, reason) => {
      const { serviceId } = (await create(service({ callbackUrl: 'https://partner.example/hooks' }))).json().response;
      const before = await t.ctx.store.getService(serviceId);
      const res = await patch(serviceId, { name: 'Renamed', [field]: url });
      expect([res.statusCode, res.json().error]).toEqual([400, { code: '1102', message: `${field} "${url}" cannot receive messages: ${reason}.` }]);
      expect(await t.ctx.store.getService(serviceId)).toEqual(before);
    });

    it('accepts public https URLs, and private ones the allow-list names', async () => {
      const created = await create(service({ callbackUrl: 'https://partner.example/hooks', eventCallbackUrl: 'https://192.168.7.9/events' }));
      expect(created.statusCode).toBe(200);
      const { serviceId } = created.json().response;
      const patched = await patch(serviceId, { callbackUrl: 'https://[2002:5db8:d70e::1]/hooks', eventCallbackUrl: null });
      expect(patched.json().response).toMatchObject({ callbackUrl: 'https://[2002:5db8:d70e::1]/hooks', eventCallbackUrl: null });
    });
  });

  describe('phase QA', () => {
    beforeEach(async () => {
      t = await testApp({ settings: { PHASE: 'QA' } });
    });

    it('accepts http, loopback and private networks on create and patch', async () => {
      const created = await create(service({ callbackUrl: 'http://127.0.0.1:3000/hooks', eventCallbackUrl: 'http://[::1]:3000/events' }));
      expect(created.statusCode).toBe(200);
      const patched = await patch(created.json().response.serviceId, { callbackUrl: 'http://192.168.1.20/hooks', eventCallbackUrl: 'https://10.1.2.3/events' });
      expect(patched.json().response).toMatchObject({ callbackUrl: 'http://192.168.1.20/hooks', eventCallbackUrl: 'https://10.1.2.3/events' });
    });

    it('still refuses the metadata address, as every delivery to it would be', async () => {
      const res = await create(service({ callbackUrl: 'http://169.254.169.254/latest' }));
      expect(res.json().error).toEqual({
        code: '1102',
        message: 'callbackUrl "http://169.254.169.254/latest" cannot receive messages: 169.254.169.254 is a link-local (cloud metadata) address, refused in phase QA.',
      });
    });
  });
});
