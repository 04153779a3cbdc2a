import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExpiringMap, LookupCache, type LookupSource } from '../../src/core/cache.js';
import { openStore } from '../../src/store/index.js';
import type { AccessToken, Connection, Device, EventSubscription, Service } from '../../src/core/model.js';
import type { LookupChange, LookupWatcher, Store } from '../../src/store/store.js';
import { createTestDatabase, postgresAdminUrl, postgresUnreachable, withClient, type TestDatabase } from '../helpers/postgres.js';

function service(serviceId: string, keyHash = 'hash-1'): Service {
  return { serviceId, name: serviceId, keyHash, allowedDevices: [], callbackUrl: null, eventCallbackUrl: null, enabled: true, webhookSecrets: [], createdAt: 0 };
}

function device(deviceId: string, userNumbers: string[]): Device {
  return { deviceId, deviceType: 'DEVICE_WASHER', modelName: 'M', alias: deviceId, groupId: null, secretHash: 'h', virtual: true, online: true, userNumbers, createdAt: 0 };
}

function token(tokenHash: string, userNumber: string): AccessToken {
  return { tokenHash, userNumber, serviceId: 'S1', expiresAt: 10_000, revokedAt: null, revokedReason: null };
}

/**
 * A store of plain maps that counts its reads; `pause` makes the next read wait until released. It
 * keeps what the cache publishes, and `watcher()` plays the other processes' changes.
 */
function fakeStore() {
  const services = new Map<string, Service>();
  const tokens = new Map<string, AccessToken>();
  const connections = new Map<string, Connection>();
  const devices = new Map<string, Device>();
  const lists = new Map<string, Device[]>();
  /** By `serviceId/userNumber`. */
  const events = new Map<string, EventSubscription[]>();
  const reads = { services: 0, tokens: 0, connections: 0, devices: 0, lists: 0, events: 0 };
  const published: LookupChange[] = [];
  let watcher: LookupWatcher | undefined;
  let watching: Promise<void> = Promise.resolve();
  let gate: Promise<void> | null = null;
  const wait = async () => {
    if (gate) await gate;
  };
  const store: LookupSource = {
    async getService(id: string) {
      reads.services += 1;
      const found = services.get(id);
      await wait();
      return found;
    },
    async getToken(hash: string) {
      reads.tokens += 1;
      return tokens.get(hash);
    },
    async getConnection(serviceId: string, userNumber: string) {
      reads.connections += 1;
      return connections.get(`${serviceId}/${userNumber}`);
    },
    async getDevice(deviceId: string) {
      reads.devices += 1;
      return devices.get(deviceId);
    },
    async listUserDevices(userNumber: string) {
      reads.lists += 1;
      return lists.get(userNumber) ?? [];
    },
    async listEventSubscriptions(serviceId: string, userNumber: string, now: number) {
      reads.events += 1;
      return (events.get(`${serviceId}/${userNumber}`) ?? []).filter((held) => held.expiresAt > now);
    },
    capabilities: {
      crossNodeNotify: {
        async publishLookupChange(change) {
          published.push(change);
        },
        async watchLookupChanges(w) {
          await watching;
          watcher = w;
          return () => {};
        },
      },
    },
  };
  return {
    store,
    services,
    tokens,
    connections,
    devices,
    lists,
    events,
    reads,
    published,
    watcher(): LookupWatcher {
      if (!watcher) throw new Error('The cache does not watch changes');
      return watcher;
    },
    /** Watching begins only once released. */
    holdWatching(): () => void {
      let release!: () => void;
      watching = new Promise((resolve) => (release = resolve));
      return release;
    },
    pause(): () => void {
      let release!: () => void;
      gate = new Promise((resolve) => (release = resolve));
      return () => {
        gate = null;
        release();
      };
    },
  };
}

/** A cache over a fake store, past its first read (which begins watching changes, and is not kept). */
async function setup(ttlMs = 1000) {
  const fake = fakeStore();
  let now = 0;
  const cache = new LookupCache(fake.store, { ttlMs, now: () => now });
  await cache.getService('first read');
  fake.reads.services = 0;
  return { ...fake, cache, advance: (ms: number) => (now += ms) };
}

describe('ExpiringMap', () => {
  it('forgets an entry once its TTL has passed', () => {
    let now = 0;
    const map = new ExpiringMap<string, number>(100, 10, () => now);
    map.set('a', 1);
    now = 99;
    expect(map.get('a')).toBe(1);
    now = 100;
    expect(map.get('a')).toBeUndefined();
  });

  it('drops the oldest stored entry beyond its capacity', () => {
    const map = new ExpiringMap<string, number>(1000, 2, () => 0);
    map.set('a', 1);
    map.set('b', 2);
    map.set('a', 3);
    map.set('c', 4);
    expect([map.get('a'), map.get('b'), map.get('c')]).toEqual([3, undefined, 4]);
  });
});

describe('LookupCache', () => {
  it('reads a service once, serves it from memory until the TTL, then reads it again', async () => {
    const t = await setup(1000);
    t.services.set('S1', service('S1'));
    await t.cache.getService('S1');
    t.advance(999);
    expect(await t.cache.getService('S1')).toEqual(service('S1'));
    expect(t.reads.services).toBe(1);
    t.advance(1);
    await t.cache.getService('S1');
    expect(t.reads.services).toBe(2);
  });

  it('answers what it holds at once, not as a promise, and what it must read as one', async () => {
    const t = await setup(1000);
    t.services.set('S1', service('S1'));
    t.tokens.set('T1', token('T1', 'U1'));
    t.devices.set('D1', device('D1', ['U1']));
    const first = [t.cache.getService('S1'), t.cache.getToken('T1'), t.cache.getDevice('D1')];
    expect(first.every((answer) => answer instanceof Promise)).toBe(true);
    await Promise.all(first);
    expect([t.cache.getService('S1'), t.cache.getToken('T1'), t.cache.getDevice('D1')]).toEqual([service('S1'), token('T1', 'U1'), device('D1', ['U1'])]);
  });

  it('keeps nothing for what does not exist, so that a new service or token works at once', async () => {
    const t = await setup();
    expect(await t.cache.getService('S1')).toBeUndefined();
    expect(await t.cache.getToken('T1')).toBeUndefined();
    t.services.set('S1', service('S1'));
    t.tokens.set('T1', token('T1', 'U1'));
    expect((await t.cache.getService('S1'))?.serviceId).toBe('S1');
    expect((await t.cache.getToken('T1'))?.userNumber).toBe('U1');
  });

  it('sees a changed key or setting at once when told the service changed', async () => {
    const t = await setup();
    t.services.set('S1', service('S1', 'old-key'));
    await t.cache.getService('S1');
    t.services.set('S1', { ...service('S1', 'new-key'), enabled: false });
    expect((await t.cache.getService('S1'))?.keyHash).toBe('old-key');
    t.cache.serviceChanged('S1');
    expect(await t.cache.getService('S1')).toMatchObject({ keyHash: 'new-key', enabled: false });
  });

  it("drops a user's tokens, connections and devices when told the user changed, and no one else's", async () => {
    const t = await setup();
    t.tokens.set('T1', token('T1', 'U1'));
    t.tokens.set('T2', token('T2', 'U2'));
    t.connections.set('S1/U1', { serviceId: 'S1', userNumber: 'U1', deviceListLoadedAt: 1 });
    t.devices.set('D1', device('D1', ['U2', 'U1']));
    t.devices.set('D2', device('D2', ['U2']));
    for (const hash of ['T1', 'T2']) await t.cache.getToken(hash);
    await t.cache.getConnection('S1', 'U1');
    for (const id of ['D1', 'D2']) await t.cache.getDevice(id);
    t.tokens.set('T1', { ...token('T1', 'U1'), revokedAt: 5, revokedReason: 'disconnected' });
    t.connections.delete('S1/U1');
    t.devices.set('D1', device('D1', ['U2']));

    t.cache.userChanged('U1');
    expect((await t.cache.getToken('T1'))?.revokedReason).toBe('disconnected');
    expect(await t.cache.getConnection('S1', 'U1')).toBeUndefined();
    expect((await t.cache.getDevice('D1'))?.userNumbers).toEqual(['U2']);
    await t.cache.getToken('T2');
    await t.cache.getDevice('D2');
    expect([t.reads.tokens, t.reads.devices]).toEqual([3, 3]);
  });

  it('sees a device shared, unregistered or gone at once when told the device changed', async () => {
    const t = await setup();
    t.devices.set('D1', device('D1', ['U1']));
    await t.cache.getDevice('D1');
    t.devices.set('D1', device('D1', ['U1', 'U2']));
    expect((await t.cache.getDevice('D1'))?.userNumbers).toEqual(['U1']);
    t.cache.deviceChanged('D1');
    expect((await t.cache.getDevice('D1'))?.userNumbers).toEqual(['U1', 'U2']);
    t.devices.delete('D1');
    t.cache.deviceChanged('D1');
    expect(await t.cache.getDevice('D1')).toBeUndefined();
  });

  it("keeps a user's device list until the user or one of its devices changes, and only the lists concerned", async () => {
    const t = await setup();
    const shared = device('D1', ['U1', 'U2']);
    t.lists.set('U1', [shared]);
    t.lists.set('U2', [shared, device('D2', ['U2'])]);
    t.lists.set('U3', [device('D3', ['U3'])]);
    const listAll = () => Promise.all(['U1', 'U2', 'U3'].map((u) => t.cache.listUserDevices(u)));
    await listAll();
    await listAll();
    expect(t.reads.lists).toBe(3);

    t.lists.set('U1', [{ ...shared, alias: 'Renamed' }]);
    t.cache.deviceChanged('D1');
    expect((await t.cache.listUserDevices('U1'))[0]?.alias).toBe('Renamed');
    await listAll();
    expect(t.reads.lists).toBe(5);

    t.lists.set('U3', [device('D3', ['U3']), device('D4', ['U3'])]);
    t.cache.userChanged('U3');
    expect(await t.cache.listUserDevices('U3')).toHaveLength(2);
    await listAll();
    expect(t.reads.lists).toBe(6);
  });

  describe("a connection's event subscriptions (the device list's reportable)", () => {
    const held = (deviceId: string, expiresAt: number): EventSubscription => ({ serviceId: 'S1', userNumber: 'U1', deviceId, expiresAt });

    it('keeps them until told they changed', async () => {
      const t = await setup();
      t.events.set('S1/U1', [held('D1', 500)]);
      expect([...(await t.cache.eventDeviceIds('S1', 'U1', 0))]).toEqual(['D1']);
      t.events.set('S1/U1', [held('D1', 500), held('D2', 500)]);
      expect([...(await t.cache.eventDeviceIds('S1', 'U1', 0))]).toEqual(['D1']);
      t.cache.eventsChanged('S1', 'U1');
      expect([...(await t.cache.eventDeviceIds('S1', 'U1', 0))]).toEqual(['D1', 'D2']);
      expect(t.reads.events).toBe(2);
    });

    it('reads them again from the earliest expiry among them, by the domain clock', async () => {
      const t = await setup();
      t.events.set('S1/U1', [held('D1', 500), held('D2', 100)]);
      expect((await t.cache.eventDeviceIds('S1', 'U1', 99)).size).toBe(2);
      expect([...(await t.cache.eventDeviceIds('S1', 'U1', 100))]).toEqual(['D1']);
      expect(t.reads.events).toBe(2);
    });

    it('drops them when the service, the user or one of their devices changes, and only those', async () => {
      const t = await setup();
      t.events.set('S1/U1', [held('D1', 500)]);
      t.events.set('S2/U2', [{ ...held('D2', 500), serviceId: 'S2', userNumber: 'U2' }]);
      const readBoth = () => Promise.all([t.cache.eventDeviceIds('S1', 'U1', 0), t.cache.eventDeviceIds('S2', 'U2', 0)]);
      await readBoth();
      for (const change of [() => t.cache.serviceChanged('S1'), () => t.cache.userChanged('U1'), () => t.cache.deviceChanged('D1')]) {
        change();
        await readBoth();
      }
      expect(t.reads.events).toBe(2 + 3);
    });
  });

  it('keeps a connection only once its device list is loaded, the change nobody announces', async () => {
    const t = await setup();
    t.connections.set('S1/U1', { serviceId: 'S1', userNumber: 'U1', deviceListLoadedAt: null });
    expect((await t.cache.getConnection('S1', 'U1'))?.deviceListLoadedAt).toBeNull();
    t.connections.set('S1/U1', { serviceId: 'S1', userNumber: 'U1', deviceListLoadedAt: 7 });
    expect((await t.cache.getConnection('S1', 'U1'))?.deviceListLoadedAt).toBe(7);
    await t.cache.getConnection('S1', 'U1');
    expect(t.reads.connections).toBe(2);
  });

  it('does not keep what a read found when the service changed while it was reading', async () => {
    const t = await setup();
    t.services.set('S1', service('S1', 'old-key'));
    const release = t.pause();
    const reading = t.cache.getService('S1');
    t.services.set('S1', service('S1', 'new-key'));
    t.cache.serviceChanged('S1');
    release();
    expect((await reading)?.keyHash).toBe('old-key');
    expect((await t.cache.getService('S1'))?.keyHash).toBe('new-key');
  });
});

describe('LookupCache between processes', () => {
  it('tells the other processes, through the store, of each change it is told', async () => {
    const t = await setup();
    t.cache.serviceChanged('S1');
    t.cache.userChanged('U1');
    t.cache.deviceChanged('D1');
    t.cache.eventsChanged('S1', 'U1');
    expect(t.published).toEqual([{ serviceId: 'S1' }, { userNumber: 'U1' }, { deviceId: 'D1' }, { eventsOf: { serviceId: 'S1', userNumber: 'U1' } }]);
  });

  it('drops what another process changed, and tells no one again', async () => {
    const t = await setup();
    t.services.set('S1', service('S1', 'old-key'));
    t.devices.set('D1', device('D1', ['U1']));
    await t.cache.getService('S1');
    await t.cache.getDevice('D1');
    t.services.set('S1', service('S1', 'new-key'));
    t.watcher().changed({ serviceId: 'S1' });
    expect((await t.cache.getService('S1'))?.keyHash).toBe('new-key');
    await t.cache.getDevice('D1');
    expect([t.reads.services, t.reads.devices]).toEqual([2, 1]);
    expect(t.published).toEqual([]);
  });

  it("tells those watching devices of each device change, this process's and another's, and of no other kind", async () => {
    const t = await setup();
    const changed: string[] = [];
    t.cache.onDeviceChanged((deviceId) => changed.push(deviceId));
    await t.cache.deviceChanged('D1');
    t.watcher().changed({ deviceId: 'D2' });
    await t.cache.userChanged('U1');
    t.watcher().changed({ serviceId: 'S1' });
    expect(changed).toEqual(['D1', 'D2']);
  });

  it('forgets everything when changes may have been missed', async () => {
    const t = await setup();
    t.services.set('S1', service('S1'));
    t.tokens.set('T1', token('T1', 'U1'));
    await t.cache.getService('S1');
    await t.cache.getToken('T1');
    t.watcher().missed();
    await t.cache.getService('S1');
    await t.cache.getToken('T1');
    expect([t.reads.services, t.reads.tokens]).toEqual([2, 2]);
  });

  it('forgets what it read before it began watching changes, once it has', async () => {
    const fake = fakeStore();
    const cache = new LookupCache(fake.store);
    fake.services.set('S1', service('S1'));
    const release = fake.holdWatching();
    await cache.getService('S1');
    await cache.getService('S1');
    expect(fake.reads.services).toBe(1);
    release();
    await expect.poll(async () => (await cache.getService('S1'), fake.reads.services)).toBe(2);
  });
});

const adminUrl = postgresAdminUrl();
const unreachable = await postgresUnreachable(adminUrl);

describe.skipIf(unreachable !== undefined)('LookupCache on two nodes of one PostgreSQL', () => {
  let db: TestDatabase;
  let nodes: Store[] = [];
  beforeAll(async () => {
    db = await createTestDatabase(adminUrl);
    nodes = [await openStore(db.url), await openStore(db.url)];
    await nodes[0]!.createService(
      { serviceId: 'S1', name: 'First', keyHash: 'h', allowedDevices: [], callbackUrl: null, eventCallbackUrl: null, webhookSecret: 'whsec' },
      0,
    );
  });
  afterAll(async () => {
    for (const node of nodes) await node.close();
    await db?.drop();
  });

  /** A cache on node B that keeps entries for long, so that only a notification can drop them, holding S1. */
  async function cachedOnB(): Promise<LookupCache> {
    const b = nodes[1]!;
    const cache = new LookupCache(b, { ttlMs: 3_600_000 });
    // Once watching, the cache keeps S1: reading it again sends nothing to the database.
    const statementsOfARead = async () => {
      const before = b.capabilities.statementCounts?.statementsSent() ?? 0;
      await cache.getService('S1');
      return (b.capabilities.statementCounts?.statementsSent() ?? 0) - before;
    };
    await expect.poll(statementsOfARead).toBe(0);
    return cache;
  }

  it('a change told to the cache of node A drops the entry on node B', async () => {
    const onB = await cachedOnB();
    const onA = new LookupCache(nodes[0]!);
    await nodes[0]!.updateService('S1', { name: 'Told' });
    expect((await onB.getService('S1'))?.name).not.toBe('Told');
    onA.serviceChanged('S1');
    await expect.poll(async () => (await onB.getService('S1'))?.name).toBe('Told');
  });

  it('every kind of change reaches node B as it was published', async () => {
    const seen: LookupChange[] = [];
    const stop = await nodes[1]!.capabilities.crossNodeNotify!.watchLookupChanges({ changed: (change) => seen.push(change), missed: () => {} });
    const changes: LookupChange[] = [{ serviceId: 'S:1' }, { userNumber: 'U 1' }, { deviceId: 'D1' }, { eventsOf: { serviceId: 'S:1', userNumber: 'U "1"' } }];
    for (const change of changes) await nodes[0]!.capabilities.crossNodeNotify!.publishLookupChange(change);
    await expect.poll(() => seen).toEqual(changes);
    stop();
  });

  it("node B forgets everything once it listens again after losing its connection (PostgreSQL restarted)", async () => {
    const onB = await cachedOnB();
    // Changed without telling: as if the notification had been sent while B was not listening.
    const name = `Untold ${Date.now()}`;
    await nodes[0]!.updateService('S1', { name });
    await withClient(db.url, (c) =>
      c.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'"),
    );
    await expect.poll(async () => (await onB.getService('S1'))?.name, { timeout: 5000 }).toBe(name);
  });
});
