/**
 * DESIGN F: any node can serve any request. Two `serve` processes on one PostgreSQL database: what
 * one writes the other reads, and a change made through one is seen by the other at once — not after
 * its lookup cache expires (1 s). A's answer waits for the NOTIFY to commit; B reads it from its own
 * connection a moment later, so B is given SOON to see it, a quarter of that TTL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, postgresAdminUrl, postgresUnreachable, type TestDatabase } from '../helpers/postgres.js';
import { startReceiver, type Receiver } from '../delivery/harness.js';
import { createClusterWorld, ok, startNode, type ClusterWorld, type Node } from './nodes.js';

const adminUrl = postgresAdminUrl();
const unreachable = await postgresUnreachable(adminUrl);
if (unreachable) console.warn(`Skipping the two-node tests: ${unreachable}`);

/** Well within the lookup cache's 1 s TTL: what passes in it was told through NOTIFY, not expired. */
const SOON = { timeout: 250, interval: 10 };

describe.skipIf(unreachable !== undefined)('two nodes on one database', () => {
  let db: TestDatabase;
  let receiver: Receiver;
  let a: Node;
  let b: Node;
  let world: ClusterWorld;

  beforeAll(async () => {
    db = await createTestDatabase(adminUrl);
    receiver = await startReceiver();
    // Both start on the empty database at once: the migrations run at start, once.
    [a, b] = await Promise.all([startNode('A', db.url), startNode('B', db.url)]);
    world = await createClusterWorld(a, receiver.url, 2);
  });

  afterAll(async () => {
    const codes = await Promise.all([a?.stop(), b?.stop()]);
    await receiver?.close();
    await db?.drop();
    expect(codes).toEqual([0, 0]);
  });

  it('reads through B the service, user, token and devices registered through A', async () => {
    const devices = ok<{ deviceId: string }[]>(await b.partner(world.partner, 'GET', '/devices'), 'GET /devices through B');
    expect(devices.map((d) => d.deviceId).sort()).toEqual([...world.deviceIds].sort());
    const device = ok<{ device: unknown }>(await b.admin('GET', `/devices/${world.deviceIds[0]}`), 'admin GET device through B');
    expect(device.device).toMatchObject({ deviceId: world.deviceIds[0], deviceType: 'DEVICE_CEILING_FAN', alias: 'Fan 0' });
    expect(ok(await b.admin('GET', `/services/${world.partner.serviceId}`), 'admin GET service through B')).toMatchObject({ name: 'cluster' });
  });

  it('refuses through B, at once, a service disabled through A, and serves it again once enabled', async () => {
    // B has the service in its cache from this request.
    expect((await b.partner(world.partner, 'GET', '/devices')).status).toBe(200);
    ok(await a.admin('PATCH', `/services/${world.partner.serviceId}`, { enabled: false }), 'disable through A');
    await expect.poll(async () => {
      const refused = await b.partner(world.partner, 'GET', '/devices');
      return [refused.status, refused.body.error?.code];
    }, SOON).toEqual([401, '1301']);

    ok(await a.admin('PATCH', `/services/${world.partner.serviceId}`, { enabled: true }), 'enable through A');
    await expect.poll(async () => (await b.partner(world.partner, 'GET', '/devices')).status, SOON).toBe(200);
  });

  it('lists through B, at once, a device registered, renamed or unregistered through A', async () => {
    const other = await createClusterWorld(a, receiver.url, 1);
    const listThroughB = async () => ok<{ deviceId: string; deviceInfo: { alias: string } }[]>(await b.partner(other.partner, 'GET', '/devices'), 'GET /devices through B');
    expect(await listThroughB()).toHaveLength(1);
    const added = ok<{ deviceId: string }>(await a.admin('POST', `/users/${other.userNumber}/devices`, { deviceType: 'DEVICE_CEILING_FAN', alias: 'Added', virtual: false }), 'register through A');
    await expect.poll(async () => (await listThroughB()).map((d) => d.deviceInfo.alias), SOON).toEqual(['Fan 0', 'Added']);
    ok(await a.admin('PATCH', `/devices/${added.deviceId}`, { alias: 'Renamed' }), 'rename through A');
    await expect.poll(async () => (await listThroughB()).map((d) => d.deviceInfo.alias), SOON).toEqual(['Fan 0', 'Renamed']);
    ok(await a.admin('DELETE', `/users/${other.userNumber}/devices/${added.deviceId}`), 'unregister through A');
    await expect.poll(async () => (await listThroughB()).map((d) => d.deviceId), SOON).toEqual(other.deviceIds);
  });

  it('refuses through B, at once, a token whose user disconnected through A', async () => {
    const other = await createClusterWorld(a, receiver.url, 1);
    expect((await b.partner(other.partner, 'GET', '/devices')).status).toBe(200);
    ok(await a.partner(other.partner, 'DELETE', '/user/service'), 'DELETE /user/service through A');
    await expect.poll(async () => {
      const refused = await b.partner(other.partner, 'GET', '/devices');
      return [refused.status, refused.body.error?.code];
    }, SOON).toEqual([404, '1202']);
  });

  it('refuses through B, at once, a user deleted through A', async () => {
    const other = await createClusterWorld(a, receiver.url, 1);
    expect((await b.partner(other.partner, 'GET', `/devices/profile/${other.deviceIds[0]}`)).status).toBe(200);
    ok(await a.admin('DELETE', `/users/${other.userNumber}`), 'delete the user through A');
    await expect.poll(async () => {
      const refused = await b.partner(other.partner, 'GET', `/devices/profile/${other.deviceIds[0]}`);
      return [refused.status, refused.body.error?.code];
    }, SOON).toEqual([404, '1202']);
  });

  it("keeps every change when A and B store reports of one device at once, neither writing over the other's", async () => {
    const deviceId = world.deviceIds[0]!;
    // Each report adds a key of its own, all sent at once: each node stores them one after another
    // (its lock), so the two nodes' read-then-write turns overlap all the time.
    const keys = ['A', 'B'].flatMap((node) => Array.from({ length: 40 }, (_, n) => `${node}${n}`));
    await Promise.all(keys.map(async (key) => ok(await (key.startsWith('A') ? a : b).admin('POST', `/devices/${deviceId}/report`, { race: { [key]: 1 } }), `report ${key}`)));
    const { status } = ok<{ status: { race?: Record<string, number> } }>(await a.admin('GET', `/devices/${deviceId}`), 'admin GET device');
    expect(Object.keys(status.race ?? {}).sort()).toEqual([...keys].sort());
  });

  it("answers through B the virtual appliances' time scale set through A: it is the deployment's", async () => {
    expect(ok(await a.admin('PUT', '/sim/time-scale', { scale: 60 }), 'time scale through A')).toEqual({ scale: 60 });
    expect(ok(await b.admin('GET', '/sim/time-scale'), 'time scale through B')).toEqual({ scale: 60 });
  });
});
