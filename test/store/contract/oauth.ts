/** Contract: the OAuth area (DESIGN G) — the authorization server's records, device shares, owner logins, redirect URIs, shared secrets. */
import { expect, it } from 'vitest';
import type { OAuthRecord } from '../../../src/store/areas/oauth.js';
import type { Store } from '../../../src/store/store.js';
import { addDevice, addService, addUser, freshStore, HOUR, T0 } from './world.js';

const record = (model: string, key: string, fields: Partial<OAuthRecord> = {}): OAuthRecord => ({
  model, key, payload: `{"kind":"${model}"}`, grantId: null, userCode: null, uid: null, expiresAt: T0 + HOUR, consumedAt: null, ...fields,
});

export function oauthContract(open: () => Promise<Store>): void {
  const store = freshStore(open);

  it('keeps records by kind and key until they expire, found also by user code and uid', async () => {
    await store().saveOAuthRecord(record('DeviceCode', 'k1', { userCode: 'ABCD-EFGH' }));
    await store().saveOAuthRecord(record('Session', 'k1', { uid: 'u1', expiresAt: null }));
    expect(await store().findOAuthRecord('DeviceCode', 'k1', T0)).toEqual(record('DeviceCode', 'k1', { userCode: 'ABCD-EFGH' }));
    expect(await store().findOAuthRecord('DeviceCode', 'k1', T0 + HOUR)).toBeUndefined();
    expect((await store().findOAuthRecordByUserCode('DeviceCode', 'ABCD-EFGH', T0))?.key).toBe('k1');
    expect((await store().findOAuthRecordByUid('Session', 'u1', T0 + 1000 * HOUR))?.model).toBe('Session');
    await store().saveOAuthRecord(record('DeviceCode', 'k1', { payload: '{"kind":"again"}' }));
    expect((await store().findOAuthRecord('DeviceCode', 'k1', T0))?.payload).toBe('{"kind":"again"}');
  });

  it('consumes, destroys, and revokes a grant with everything it issued', async () => {
    for (const key of ['a', 'b']) await store().saveOAuthRecord(record('RefreshToken', key, { grantId: 'G1' }));
    await store().saveOAuthRecord(record('Grant', 'g', { grantId: 'G1' }));
    await store().saveOAuthRecord(record('AccessToken', 'c', { grantId: 'G2' }));
    expect(await store().consumeOAuthRecord('RefreshToken', 'a', T0 + 5)).toBe(true);
    // Once only: a second consumer (a concurrent use of the same code or token) is told it lost.
    expect(await store().consumeOAuthRecord('RefreshToken', 'a', T0 + 6)).toBe(false);
    expect((await store().findOAuthRecord('RefreshToken', 'a', T0))?.consumedAt).toBe(T0 + 5);
    await store().destroyOAuthRecord('RefreshToken', 'a');
    expect(await store().findOAuthRecord('RefreshToken', 'a', T0)).toBeUndefined();
    await store().revokeOAuthGrant('G1');
    expect(await store().findOAuthRecord('RefreshToken', 'b', T0)).toBeUndefined();
    expect(await store().findOAuthRecord('Grant', 'g', T0)).toBeUndefined();
    expect(await store().findOAuthRecord('AccessToken', 'c', T0)).toBeDefined();
  });

  it('deletes the records expired at a time, at most as many as asked each time, and no other', async () => {
    for (const key of ['e1', 'e2', 'e3']) await store().saveOAuthRecord(record('AccessToken', key, { expiresAt: T0 + HOUR - 1 }));
    await store().saveOAuthRecord(record('AccessToken', 'live', { expiresAt: T0 + 2 * HOUR }));
    await store().saveOAuthRecord(record('Session', 'forever', { expiresAt: null }));
    expect(await store().deleteExpiredOAuthRecords(T0 + HOUR, 2)).toBe(2);
    expect(await store().deleteExpiredOAuthRecords(T0 + HOUR, 2)).toBe(1);
    expect(await store().deleteExpiredOAuthRecords(T0 + HOUR, 2)).toBe(0);
    // Found at T0, when none had expired: gone, not only hidden.
    for (const key of ['e1', 'e2', 'e3']) expect(await store().findOAuthRecord('AccessToken', key, T0)).toBeUndefined();
    expect(await store().findOAuthRecord('AccessToken', 'live', T0 + HOUR)).toBeDefined();
    expect(await store().findOAuthRecord('Session', 'forever', T0 + HOUR)).toBeDefined();
  });

  it("records a pair's share and connects the pair; a new consent or an unlink ends the earlier grant but its access tokens", async () => {
    await addService(store(), 'S1');
    await addUser(store(), 'U1');
    await addDevice(store(), 'D1', 'U1');
    const share = { serviceId: 'S1', userNumber: 'U1', grantId: 'G1', scopes: ['devices'], deviceIds: ['D1'], createdAt: T0 };
    await store().saveDeviceShare(share);
    expect(await store().getConnection('S1', 'U1')).toMatchObject({ serviceId: 'S1', userNumber: 'U1' });
    expect(await store().getDeviceShare('S1', 'U1')).toEqual(share);
    await store().saveOAuthRecord(record('RefreshToken', 'r1', { grantId: 'G1' }));
    await store().saveOAuthRecord(record('AccessToken', 't1', { grantId: 'G1' }));

    expect(await store().getDeviceShareByGrant('G1')).toEqual(share);
    await store().saveDeviceShare({ ...share, grantId: 'G2', deviceIds: null, createdAt: T0 + 1 });
    expect(await store().listDeviceShares('U1')).toEqual([{ ...share, grantId: 'G2', deviceIds: null, createdAt: T0 + 1 }]);
    // The earlier grant no longer stands for the pair.
    expect(await store().getDeviceShareByGrant('G1')).toBeUndefined();
    expect(await store().getDeviceShareByGrant('G2')).toMatchObject({ serviceId: 'S1', userNumber: 'U1', grantId: 'G2' });
    expect(await store().findOAuthRecord('RefreshToken', 'r1', T0)).toBeUndefined();
    expect(await store().findOAuthRecord('AccessToken', 't1', T0)).toBeDefined();

    expect(await store().deleteDeviceShare('S1', 'U1')).toBe(true);
    expect(await store().deleteDeviceShare('S1', 'U1')).toBe(false);
    expect(await store().listDeviceShares('U1')).toEqual([]);
  });

  it("ends the pair's consent when it disconnects the pair, in the same write: no consent outlives its connection", async () => {
    await addService(store(), 'S1');
    await addUser(store(), 'U1');
    await store().saveDeviceShare({ serviceId: 'S1', userNumber: 'U1', grantId: 'G1', scopes: ['devices'], deviceIds: null, createdAt: T0 });
    await store().saveOAuthRecord(record('RefreshToken', 'r1', { grantId: 'G1' }));
    expect(await store().disconnect('S1', 'U1', T0 + 1)).toBe(true);
    expect(await store().getDeviceShare('S1', 'U1')).toBeUndefined();
    expect(await store().findOAuthRecord('RefreshToken', 'r1', T0)).toBeUndefined();
  });

  it('gives each email to one owner', async () => {
    await addUser(store(), 'U1');
    await addUser(store(), 'U2');
    expect(await store().setOwnerLogin({ userNumber: 'U1', email: 'a@example.com', passwordHash: 'h1' })).toBe(true);
    expect(await store().setOwnerLogin({ userNumber: 'U2', email: 'a@example.com', passwordHash: 'h2' })).toBe(false);
    expect(await store().setOwnerLogin({ userNumber: 'U1', email: 'b@example.com', passwordHash: 'h3' })).toBe(true);
    expect(await store().findOwnerLogin('b@example.com')).toEqual({ userNumber: 'U1', email: 'b@example.com', passwordHash: 'h3' });
    expect(await store().findOwnerLogin('a@example.com')).toBeUndefined();
  });

  it("keeps a service's redirect URIs, written with the service, and one secret per name for every node", async () => {
    await addService(store(), 'S1');
    expect(await store().getRedirectUris('S1')).toEqual([]);
    const uris = ['https://a.example/cb', 'https://b.example/cb'];
    await store().createService({ serviceId: 'S2', name: 'S2', keyHash: 'h', allowedDevices: [], callbackUrl: null, eventCallbackUrl: null, webhookSecret: 'w', redirectUris: uris }, T0);
    expect(await store().getRedirectUris('S2')).toEqual(uris);
    await store().updateService('S1', { name: 'Renamed' }, uris);
    expect(await store().getRedirectUris('S1')).toEqual(uris);
    await store().updateService('S1', { name: 'Renamed again' });
    expect(await store().getRedirectUris('S1')).toEqual(uris);
    // U+0000 is refused as in any statement, though SQLite keeps the list as JSON text; nothing of the update is written.
    await expect(store().updateService('S1', { name: 'Not kept' }, ['https://a.example/c\u0000b'])).rejects.toMatchObject({ code: '1000' });
    await expect(store().createService({ serviceId: 'S3', name: 'S3', keyHash: 'h', allowedDevices: [], callbackUrl: null, eventCallbackUrl: null, webhookSecret: 'w', redirectUris: ['\u0000'] }, T0)).rejects.toMatchObject({ code: '1000' });
    expect([(await store().getService('S1'))?.name, await store().getRedirectUris('S1'), await store().getService('S3')]).toEqual(['Renamed again', uris, undefined]);
    expect(await store().sharedSecret('k', 'first')).toBe('first');
    expect(await store().sharedSecret('k', 'second')).toBe('first');
  });
}
