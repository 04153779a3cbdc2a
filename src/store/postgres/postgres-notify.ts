/**
 * Telling every process on one database (DESIGN F). Two channels: a commit that made messages due
 * wakes the dispatchers, and a change of what the partner lookups read drops it from every node's
 * cache. Each process that watches LISTENs to both on one connection of its own. PostgreSQL delivers
 * a notification only when its transaction commits, and drops it on a rollback.
 */
import type { LookupChange, LookupWatcher } from '../store.js';
import type { ListenClient, Sql } from './database.js';

export const OUTBOX_CHANNEL = 'appliance_cloud_outbox';
export const LOOKUPS_CHANNEL = 'appliance_cloud_lookups';

/** How long to wait before listening again after the connection was lost. */
const RECONNECT_DELAY_MS = 1000;

/** Tells every watcher, once this statement's transaction commits (at once outside one). */
export async function notifyDue(sql: Sql): Promise<void> {
  await sql.run('SELECT pg_notify($1, $2)', OUTBOX_CHANNEL, '');
}

/** Tells every process's cache; ids are short, far below the 8000 bytes a payload may hold. */
export async function notifyLookupChange(sql: Sql, change: LookupChange): Promise<void> {
  await sql.run('SELECT pg_notify($1, $2)', LOOKUPS_CHANNEL, encodeLookupChange(change));
}

/** `service:<serviceId>`, `user:<userNumber>`, `device:<deviceId>` or `events:["<serviceId>","<userNumber>"]`. */
function encodeLookupChange(change: LookupChange): string {
  if ('eventsOf' in change) return `events:${JSON.stringify([change.eventsOf.serviceId, change.eventsOf.userNumber])}`;
  if ('serviceId' in change) return `service:${change.serviceId}`;
  if ('userNumber' in change) return `user:${change.userNumber}`;
  return `device:${change.deviceId}`;
}

/** undefined for a payload this version does not know (a newer node may send more kinds). */
function decodeLookupChange(payload: string): LookupChange | undefined {
  const colon = payload.indexOf(':');
  if (colon < 0) return undefined;
  const id = payload.slice(colon + 1);
  switch (payload.slice(0, colon)) {
    case 'service':
      return { serviceId: id };
    case 'user':
      return { userNumber: id };
    case 'device':
      return { deviceId: id };
    case 'events':
      return eventsOf(id);
    default:
      return undefined;
  }
}

function eventsOf(text: string): LookupChange | undefined {
  try {
    const [serviceId, userNumber] = JSON.parse(text) as unknown[];
    return typeof serviceId === 'string' && typeof userNumber === 'string' ? { eventsOf: { serviceId, userNumber } } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The watchers of one process, and the connection that listens for them from the first watch until
 * the store closes. After losing it, it listens again, then wakes the dispatchers and tells the
 * caches that they may have missed changes.
 */
export class Notifications {
  readonly #connect: () => ListenClient;
  readonly #outbox = new Set<() => void>();
  readonly #lookups = new Set<LookupWatcher>();
  /** While listening or connecting to. */
  #client: Promise<ListenClient> | undefined;
  #closed = false;

  constructor(connect: () => ListenClient) {
    this.#connect = connect;
  }

  /** Resolves once listening, with the unsubscribe. */
  watchOutbox(listener: () => void): Promise<() => void> {
    return this.#add(this.#outbox, listener);
  }

  /** Resolves once listening, with the unsubscribe. */
  watchLookups(watcher: LookupWatcher): Promise<() => void> {
    return this.#add(this.#lookups, watcher);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#outbox.clear();
    this.#lookups.clear();
    const client = await this.#client?.catch(() => undefined);
    this.#client = undefined;
    await client?.end().catch(() => {});
  }

  async #add<T>(watchers: Set<T>, watcher: T): Promise<() => void> {
    if (this.#closed) throw new Error('The store is closed');
    watchers.add(watcher);
    try {
      await this.#listening();
    } catch (error) {
      watchers.delete(watcher);
      throw error;
    }
    return () => {
      watchers.delete(watcher);
    };
  }

  #listening(): Promise<ListenClient> {
    this.#client ??= this.#listen().catch((error: unknown) => {
      this.#client = undefined;
      throw error;
    });
    return this.#client;
  }

  async #listen(): Promise<ListenClient> {
    const client = this.#connect();
    let listening = false;
    client.on('notification', ({ channel, payload }) => this.#notified(channel, payload ?? ''));
    // An error is followed by 'end'; without a listener it would crash the process.
    client.on('error', () => {});
    client.on('end', () => {
      if (listening) this.#lost();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${OUTBOX_CHANNEL}; LISTEN ${LOOKUPS_CHANNEL}`);
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
    listening = true;
    return client;
  }

  #notified(channel: string, payload: string): void {
    if (channel === OUTBOX_CHANNEL) {
      for (const listener of this.#outbox) listener();
      return;
    }
    const change = decodeLookupChange(payload);
    if (channel === LOOKUPS_CHANNEL && change) for (const watcher of this.#lookups) watcher.changed(change);
  }

  /** The connection ended without close(): a server restart, a network cut. */
  #lost(): void {
    if (this.#closed) return;
    this.#client = undefined;
    this.#reconnect();
  }

  #reconnect(): void {
    if (this.#closed || this.#outbox.size + this.#lookups.size === 0) return;
    const timer = setTimeout(() => {
      if (this.#closed) return;
      this.#listening().then(
        () => this.#resumed(),
        () => this.#reconnect(),
      );
    }, RECONNECT_DELAY_MS);
    timer.unref();
  }

  /** Whatever was notified while not listening is lost: dispatchers look again, caches forget. */
  #resumed(): void {
    for (const listener of this.#outbox) listener();
    for (const watcher of this.#lookups) watcher.missed();
  }
}
