/**
 * The store: every state DESIGN names, one area per concern (areas/), with one implementation per
 * database (sqlite/, postgres/) whose `<backend>-store.ts` composes the areas. Every operation that
 * changes what a calling service may be told about also records the resulting messages (DESIGN A.8)
 * in the same transaction: the outbox.
 *
 * Times are epoch milliseconds. Secrets arrive here already hashed, except webhook secrets, which
 * the delivery engine needs in clear to sign with. The records themselves are the domain's: core/model.ts.
 */
import type { RateLimit } from '../core/model.js';
import type { AccountsArea } from './areas/accounts.js';
import type { DeliveryArea } from './areas/delivery.js';
import type { DevicesArea } from './areas/devices.js';
import type { LeasesArea } from './areas/leases.js';
import type { OutboxArea } from './areas/outbox.js';
import type { OAuthArea } from './areas/oauth.js';
import type { OverviewArea } from './areas/overview.js';
import type { SharedSettingsArea } from './areas/shared-settings.js';
import type { SubscriptionsArea } from './areas/subscriptions.js';

/**
 * Adding an area: its interface in areas/<area>.ts, added here; a module per backend returning it
 * (sqlite/sqlite-<area>.ts, postgres/postgres-<area>.ts), added to each `<backend>-store.ts`.
 */
export type Store = StoreLifecycle &
  AccountsArea &
  DevicesArea &
  SubscriptionsArea &
  OutboxArea &
  DeliveryArea &
  OverviewArea &
  OAuthArea &
  LeasesArea &
  SharedSettingsArea & { readonly capabilities: StoreCapabilities };

export interface StoreLifecycle {
  /** Runs pending migrations. Idempotent. */
  migrate(): Promise<void>;
  /** Resolves when the database answers; rejects otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * What only some databases can do, each null where the database cannot: callers ask once, and a
 * store never answers with a method that does nothing (STYLE habit 5).
 */
export interface StoreCapabilities {
  /**
   * Several processes share the database and hear each other's changes (PostgreSQL NOTIFY). Without
   * it (SQLite) one process serves the file: another on it (the admin CLI) changes what this one's
   * cache holds, which it reads again when the entry expires (core/cache.ts).
   */
  readonly crossNodeNotify: LookupNotices | null;
  /** Rate-limit buckets every node on the database shares (DESIGN J). Without it, the only node limits in memory. */
  readonly sharedRateLimit: SharedRateLimit | null;
  /** Counts of what the store sent (issue 6) and ran again (DESIGN J), for /metrics. */
  readonly statementCounts: StatementCounts | null;
  /** The database's clock, which the nodes on it keep (database-time.ts). Without it, one node keeps its own. */
  readonly sharedClock: SharedClock | null;
}

export interface SharedClock {
  /** The database's time now, in milliseconds since the epoch. */
  databaseNow(): Promise<number>;
}

/** What changed of the records the partner lookups read (src/core/cache.ts says what each covers). */
export type LookupChange = { serviceId: string } | { userNumber: string } | { deviceId: string } | { eventsOf: { serviceId: string; userNumber: string } };

export interface LookupWatcher {
  changed(change: LookupChange): void;
  /** Changes may have gone unseen: whatever was kept from before must be read again. */
  missed(): void;
}

export interface LookupNotices {
  /** Tells every process on this database that something the partner lookups read changed, so that their caches drop it. */
  publishLookupChange(change: LookupChange): Promise<void>;
  /**
   * Calls `watcher` for each change published by any process on this database (this one included),
   * and `watcher.missed()` after changes may have been missed (its connection was lost and is back).
   * Resolves once watching, with the unsubscribe.
   */
  watchLookupChanges(watcher: LookupWatcher): Promise<() => void>;
}

/** What a lease took from a rate-limit bucket, and what the bucket holds after it. */
export interface RateLease {
  granted: number;
  tokens: number;
}

export interface SharedRateLimit {
  /**
   * Takes up to `want` whole tokens from the service's bucket, refilled at `limit.perSecond` up to
   * `now` and holding at most `limit.burst` (a new bucket is full).
   */
  leaseRateTokens(serviceId: string, want: number, limit: RateLimit, now: number): Promise<RateLease>;
}

/** Why a database aborted a transaction that may simply run again: it lost a race with another. */
export type RetryReason = 'serialization' | 'deadlock';

export interface StatementCounts {
  /** SQL statements sent since the store opened, transaction control and NOTIFY included. */
  statementsSent(): number;
  /** Transactions run again since the store opened, by why the database aborted them (their callers never see it). */
  transactionsRetried(): Readonly<Record<RetryReason, number>>;
}
