/**
 * What every partner request looks up before its work — its service, its token, its connection,
 * its device, and for GET /devices the user's device list and which of them the service holds event
 * subscriptions for — kept in memory so that the hot path does not ask the database each time. Whoever
 * changes one of them says so through `LookupInvalidation`: this process's domain functions, and the
 * cache passes it on through the store to every other process on the database (PostgreSQL NOTIFY),
 * whose caches drop it too. What a process is not told (SQLite has no channel between processes: the
 * admin CLI on the same file) it reads again when the entry expires, within the TTL.
 */
import type { AccessToken, Connection, Device, Service } from './model.js';
import type { Eventually } from '../eventually.js';
import type { LookupChange, LookupNotices, Store, StoreCapabilities } from '../store/store.js';

/**
 * How a cache is told that what it may hold changed; each call drops the entries concerned at once,
 * and resolves once the other processes were told (never rejects: one not told sees the change
 * within the TTL). Await it before answering, so that the next request to another node is refused.
 */
export interface LookupInvalidation {
  /** The service's settings, key or webhook secrets changed, or it is gone. */
  serviceChanged(serviceId: string): Promise<void>;
  /** The user's tokens, connections or registrations changed: revoked, disconnected, deleted. */
  userChanged(userNumber: string): Promise<void>;
  /**
   * The device's registrations, alias or connection changed, or it is gone (not its status). A new
   * registration, or a device shared with a user, is also `userChanged` of that user: their list grew.
   */
  deviceChanged(deviceId: string): Promise<void>;
  /** The service's event subscriptions for the user's devices changed: one created, renewed or removed. */
  eventsChanged(serviceId: string, userNumber: string): Promise<void>;
}

/** The lookups of the partner checks: the store's, or a cache's that answers what it holds at once. */
export interface Lookups {
  getService(serviceId: string): Eventually<Service | undefined>;
  getToken(tokenHash: string): Eventually<AccessToken | undefined>;
  getConnection(serviceId: string, userNumber: string): Eventually<Connection | undefined>;
  getDevice(deviceId: string): Eventually<Device | undefined>;
  listUserDevices(userNumber: string): Promise<Device[]>;
}

/** The devices' registrations as the embedded broker checks its connections against them (gateway/broker.ts). */
export interface DeviceRegistrations {
  getDevice(deviceId: string): Eventually<Device | undefined>;
  /** Calls `changed` with each device said to have changed, here or (PostgreSQL) on another node. */
  onDeviceChanged(changed: (deviceId: string) => void): void;
}

/** What a cache reads through: the lookups, the event subscriptions, and the store's channel of their changes between processes where it has one. */
export type LookupSource = Pick<Store, 'getService' | 'getToken' | 'getConnection' | 'getDevice' | 'listUserDevices' | 'listEventSubscriptions'> & {
  readonly capabilities: Pick<StoreCapabilities, 'crossNodeNotify'>;
};

/** How long an entry may be served without being read again: bounds staleness of changes made elsewhere. */
export const LOOKUP_TTL_MS = 1000;
/** Beyond this many entries per kind the oldest go: a bound on memory, not a working-set size. */
const LOOKUP_CAPACITY = 20_000;

/** A pair's unexpired event subscriptions: what GET /devices shows as `reportable`. */
interface HeldEvents {
  serviceId: string;
  userNumber: string;
  deviceIds: ReadonlySet<string>;
  /** The earliest expiry among them (the domain's clock): from then on the set is read again. */
  until: number;
}

interface Entry<V> {
  value: V;
  expiresAt: number;
}

/** A map whose entries expire `ttlMs` after they were stored, holding at most `capacity` (the oldest stored go first). */
export class ExpiringMap<K, V> {
  readonly #entries = new Map<K, Entry<V>>();

  constructor(
    private readonly ttlMs: number,
    private readonly capacity: number,
    private readonly now: () => number,
  ) {}

  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt > this.now()) return entry.value;
    this.#entries.delete(key);
    return undefined;
  }

  set(key: K, value: V): void {
    this.#entries.delete(key);
    if (this.#entries.size >= this.capacity) this.#entries.delete(this.#entries.keys().next().value as K);
    this.#entries.set(key, { value, expiresAt: this.now() + this.ttlMs });
  }

  delete(key: K): void {
    this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }

  /** Drops every entry whose value matches; a scan, for invalidations, which are rare. */
  deleteWhere(matches: (value: V) => boolean): void {
    for (const [key, entry] of this.#entries) if (matches(entry.value)) this.#entries.delete(key);
  }
}

export interface LookupCacheOptions {
  ttlMs?: number;
  capacity?: number;
  /** A monotonic clock in ms: the TTL is about elapsed time, not the domain's clock. */
  now?: () => number;
}

/**
 * A read-through cache of the partner lookups over the store. Only what exists is kept (an unknown
 * id is asked again, so a new service, token or device works at once), and a connection only once
 * its device list is loaded: that is the one change (GET /devices) nobody announces, and it never
 * reverts except by a disconnect, which is announced. From its first read it watches the changes
 * other processes publish, and forgets everything whenever some may have been missed.
 */
export class LookupCache implements Lookups, LookupInvalidation, DeviceRegistrations {
  readonly #services: ExpiringMap<string, Service>;
  readonly #tokens: ExpiringMap<string, AccessToken>;
  readonly #connections: ExpiringMap<string, Connection>;
  readonly #devices: ExpiringMap<string, Device>;
  /** Each user's device list, by user number. */
  readonly #lists: ExpiringMap<string, Device[]>;
  /** Each connection's event subscriptions, by `serviceId\nuserNumber`. */
  readonly #events: ExpiringMap<string, HeldEvents>;
  /**
   * The users whose cached lists hold each device, so that a change of the device drops just those
   * lists. Entries outlive the lists they point to; a stale one only drops a list that is gone.
   */
  readonly #listedIn = new Map<string, Set<string>>();
  /**
   * Bumped by every invalidation. A read that started before one must not store what it read: with
   * an asynchronous store, it may have read the old row and would put back what was just dropped.
   */
  #generation = 0;
  /** Set at the first read; undefined again if watching failed, so that a later read tries again. */
  #watching: Promise<void> | undefined;
  /** null where one process serves the database: nobody else publishes, nobody else is told. */
  readonly #notices: LookupNotices | null;
  readonly #deviceWatchers: ((deviceId: string) => void)[] = [];

  constructor(private readonly store: LookupSource, options: LookupCacheOptions = {}) {
    const ttl = options.ttlMs ?? LOOKUP_TTL_MS;
    const capacity = options.capacity ?? LOOKUP_CAPACITY;
    const now = options.now ?? (() => performance.now());
    this.#notices = store.capabilities.crossNodeNotify;
    this.#services = new ExpiringMap(ttl, capacity, now);
    this.#tokens = new ExpiringMap(ttl, capacity, now);
    this.#connections = new ExpiringMap(ttl, capacity, now);
    this.#devices = new ExpiringMap(ttl, capacity, now);
    this.#lists = new ExpiringMap(ttl, capacity, now);
    this.#events = new ExpiringMap(ttl, capacity, now);
  }

  getService(serviceId: string): Eventually<Service | undefined> {
    return this.#through(this.#services, serviceId, () => this.store.getService(serviceId));
  }

  getToken(tokenHash: string): Eventually<AccessToken | undefined> {
    return this.#through(this.#tokens, tokenHash, () => this.store.getToken(tokenHash));
  }

  getConnection(serviceId: string, userNumber: string): Eventually<Connection | undefined> {
    const load = () => this.store.getConnection(serviceId, userNumber);
    return this.#through(this.#connections, `${serviceId}\n${userNumber}`, load, (c) => c.deviceListLoadedAt !== null);
  }

  getDevice(deviceId: string): Eventually<Device | undefined> {
    return this.#through(this.#devices, deviceId, () => this.store.getDevice(deviceId));
  }

  /** The user's devices, as the store lists them (shared: read, never change, what it returns). */
  async listUserDevices(userNumber: string): Promise<Device[]> {
    this.#watch();
    const cached = this.#lists.get(userNumber);
    if (cached !== undefined) return cached;
    const generation = this.#generation;
    const list = await this.store.listUserDevices(userNumber);
    if (generation === this.#generation) {
      this.#lists.set(userNumber, list);
      for (const { deviceId } of list) {
        const users = this.#listedIn.get(deviceId);
        if (users) users.add(userNumber);
        else this.#listedIn.set(deviceId, new Set([userNumber]));
      }
    }
    return list;
  }

  /**
   * The devices for which the service holds an unexpired event subscription of the user at `now`
   * (the domain's clock), as the store lists them (shared: read, never change, what it returns).
   */
  async eventDeviceIds(serviceId: string, userNumber: string, now: number): Promise<ReadonlySet<string>> {
    this.#watch();
    const key = `${serviceId}\n${userNumber}`;
    const cached = this.#events.get(key);
    if (cached !== undefined && now < cached.until) return cached.deviceIds;
    const generation = this.#generation;
    const held = await this.store.listEventSubscriptions(serviceId, userNumber, now);
    const deviceIds = new Set(held.map((subscription) => subscription.deviceId));
    const until = held.reduce((earliest, subscription) => Math.min(earliest, subscription.expiresAt), Infinity);
    if (generation === this.#generation) this.#events.set(key, { serviceId, userNumber, deviceIds, until });
    return deviceIds;
  }

  serviceChanged(serviceId: string): Promise<void> {
    return this.#changed({ serviceId });
  }

  userChanged(userNumber: string): Promise<void> {
    return this.#changed({ userNumber });
  }

  deviceChanged(deviceId: string): Promise<void> {
    return this.#changed({ deviceId });
  }

  eventsChanged(serviceId: string, userNumber: string): Promise<void> {
    return this.#changed({ eventsOf: { serviceId, userNumber } });
  }

  onDeviceChanged(changed: (deviceId: string) => void): void {
    this.#watch();
    this.#deviceWatchers.push(changed);
  }

  /** Drops it here, and tells the other processes. */
  #changed(change: LookupChange): Promise<void> {
    this.#drop(change);
    // One not told (the database is unreachable) reads it again when its entry expires.
    return this.#notices ? this.#notices.publishLookupChange(change).catch(() => {}) : Promise.resolve();
  }

  #drop(change: LookupChange): void {
    this.#generation += 1;
    if ('eventsOf' in change) {
      this.#events.delete(`${change.eventsOf.serviceId}\n${change.eventsOf.userNumber}`);
    } else if ('serviceId' in change) {
      const { serviceId } = change;
      this.#services.delete(serviceId);
      // Which types the service may see decides which subscriptions count.
      this.#events.deleteWhere((held) => held.serviceId === serviceId);
    } else if ('userNumber' in change) {
      const { userNumber } = change;
      this.#tokens.deleteWhere((token) => token.userNumber === userNumber);
      this.#connections.deleteWhere((connection) => connection.userNumber === userNumber);
      this.#devices.deleteWhere((device) => device.userNumbers.includes(userNumber));
      this.#lists.delete(userNumber);
      this.#events.deleteWhere((held) => held.userNumber === userNumber);
    } else {
      const { deviceId } = change;
      this.#devices.delete(deviceId);
      for (const userNumber of this.#listedIn.get(deviceId) ?? []) this.#lists.delete(userNumber);
      this.#listedIn.delete(deviceId);
      this.#events.deleteWhere((held) => held.deviceIds.has(deviceId));
      for (const changed of this.#deviceWatchers) changed(deviceId);
    }
  }

  #clear(): void {
    this.#generation += 1;
    this.#services.clear();
    this.#tokens.clear();
    this.#connections.clear();
    this.#devices.clear();
    this.#lists.clear();
    this.#listedIn.clear();
    this.#events.clear();
  }

  /** Changes made before watching began were not seen: what was read meanwhile is forgotten once it has. */
  #watch(): void {
    if (!this.#notices) return;
    this.#watching ??= this.#notices.watchLookupChanges({ changed: (change) => this.#drop(change), missed: () => this.#clear() }).then(
      () => this.#clear(),
      () => {
        this.#watching = undefined;
      },
    );
  }

  /** The cached value at once, or the loaded one (see #load). */
  #through<V>(map: ExpiringMap<string, V>, key: string, load: () => Promise<V | undefined>, keep: (value: V) => boolean = () => true): Eventually<V | undefined> {
    this.#watch();
    const cached = map.get(key);
    return cached !== undefined ? cached : this.#load(map, key, load, keep);
  }

  /** The loaded value, kept if it exists, `keep` agrees and nothing was invalidated meanwhile. */
  async #load<V>(map: ExpiringMap<string, V>, key: string, load: () => Promise<V | undefined>, keep: (value: V) => boolean): Promise<V | undefined> {
    const generation = this.#generation;
    const value = await load();
    if (value !== undefined && keep(value) && generation === this.#generation) map.set(key, value);
    return value;
  }
}
