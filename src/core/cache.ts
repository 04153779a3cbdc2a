/**
 * What every partner request looks up before its work — its service, its token, its connection,
 * its device — kept in memory so that the hot path does not ask the database each time. Whoever
 * changes one of them says so through `LookupInvalidation`: this process's domain functions at once;
 * other processes (the admin CLI on the same SQLite file, other nodes) until issue 6 tells the
 * cache too, within the TTL.
 */
import type { AccessToken, Connection, Device, Service, Store } from '../store/store.js';

/** How a cache is told that what it may hold changed; each call drops the entries concerned. */
export interface LookupInvalidation {
  /** The service's settings, key or webhook secrets changed, or it is gone. */
  serviceChanged(serviceId: string): void;
  /** The user's tokens, connections or registrations changed: revoked, disconnected, deleted. */
  userChanged(userNumber: string): void;
  /** The device's registrations, alias or connection changed, or it is gone (not its status). */
  deviceChanged(deviceId: string): void;
}

/** The lookups of the partner checks, with the store's own signatures. */
export type Lookups = Pick<Store, 'getService' | 'getToken' | 'getConnection' | 'getDevice'>;

/** How long an entry may be served without being read again: bounds staleness of changes made elsewhere. */
const LOOKUP_TTL_MS = 1000;
/** Beyond this many entries per kind the oldest go: a bound on memory, not a working-set size. */
const LOOKUP_CAPACITY = 20_000;

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
 * reverts except by a disconnect, which is announced.
 */
export class LookupCache implements Lookups, LookupInvalidation {
  readonly #services: ExpiringMap<string, Service>;
  readonly #tokens: ExpiringMap<string, AccessToken>;
  readonly #connections: ExpiringMap<string, Connection>;
  readonly #devices: ExpiringMap<string, Device>;
  /**
   * Bumped by every invalidation. A read that started before one must not store what it read: with
   * an asynchronous store, it may have read the old row and would put back what was just dropped.
   */
  #generation = 0;

  constructor(private readonly store: Lookups, options: LookupCacheOptions = {}) {
    const ttl = options.ttlMs ?? LOOKUP_TTL_MS;
    const capacity = options.capacity ?? LOOKUP_CAPACITY;
    const now = options.now ?? (() => performance.now());
    this.#services = new ExpiringMap(ttl, capacity, now);
    this.#tokens = new ExpiringMap(ttl, capacity, now);
    this.#connections = new ExpiringMap(ttl, capacity, now);
    this.#devices = new ExpiringMap(ttl, capacity, now);
  }

  getService(serviceId: string): Promise<Service | undefined> {
    return this.#through(this.#services, serviceId, () => this.store.getService(serviceId));
  }

  getToken(tokenHash: string): Promise<AccessToken | undefined> {
    return this.#through(this.#tokens, tokenHash, () => this.store.getToken(tokenHash));
  }

  getConnection(serviceId: string, userNumber: string): Promise<Connection | undefined> {
    const load = () => this.store.getConnection(serviceId, userNumber);
    return this.#through(this.#connections, `${serviceId}\n${userNumber}`, load, (c) => c.deviceListLoadedAt !== null);
  }

  getDevice(deviceId: string): Promise<Device | undefined> {
    return this.#through(this.#devices, deviceId, () => this.store.getDevice(deviceId));
  }

  serviceChanged(serviceId: string): void {
    this.#generation += 1;
    this.#services.delete(serviceId);
  }

  userChanged(userNumber: string): void {
    this.#generation += 1;
    this.#tokens.deleteWhere((token) => token.userNumber === userNumber);
    this.#connections.deleteWhere((connection) => connection.userNumber === userNumber);
    this.#devices.deleteWhere((device) => device.userNumbers.includes(userNumber));
  }

  deviceChanged(deviceId: string): void {
    this.#generation += 1;
    this.#devices.delete(deviceId);
  }

  /** The cached value, or the loaded one, kept if it exists, `keep` agrees and nothing was invalidated meanwhile. */
  async #through<V>(map: ExpiringMap<string, V>, key: string, load: () => Promise<V | undefined>, keep: (value: V) => boolean = () => true): Promise<V | undefined> {
    const cached = map.get(key);
    if (cached !== undefined) return cached;
    const generation = this.#generation;
    const value = await load();
    if (value !== undefined && keep(value) && generation === this.#generation) map.set(key, value);
    return value;
  }
}

const caches = new WeakMap<Lookups, LookupCache>();

/**
 * The one cache of a store, shared by every domain service over it (Accounts and Devices tell it of
 * their changes, the partner checks read through it), so that a change made through either is seen
 * by the next request however the services were wired.
 */
export function lookupCacheOf(store: Lookups): LookupCache {
  let cache = caches.get(store);
  if (!cache) {
    cache = new LookupCache(store);
    caches.set(store, cache);
  }
  return cache;
}
