/**
 * Waking dispatchers in every process (DESIGN F): a commit that made messages due NOTIFYs one
 * channel, and each process that watches LISTENs to it on a connection of its own. PostgreSQL
 * delivers a notification only when its transaction commits, and drops it on a rollback.
 */
import type { ListenClient, Sql } from './database.js';

export const OUTBOX_CHANNEL = 'appliance_cloud_outbox';

/** How long to wait before listening again after the connection was lost. */
const RECONNECT_DELAY_MS = 1000;

/** Tells every watcher, once this statement's transaction commits (at once outside one). */
export async function notifyDue(sql: Sql): Promise<void> {
  await sql.run('SELECT pg_notify($1, $2)', OUTBOX_CHANNEL, '');
}

/**
 * The watchers of one process, and the connection that listens for them from the first watch until
 * the store closes. After losing it, it listens again and wakes everyone: notifications may have
 * been missed meanwhile.
 */
export class OutboxWatch {
  readonly #connect: () => ListenClient;
  readonly #listeners = new Set<() => void>();
  /** While listening or connecting to. */
  #client: Promise<ListenClient> | undefined;
  #closed = false;

  constructor(connect: () => ListenClient) {
    this.#connect = connect;
  }

  /** Resolves once listening, with the unsubscribe. */
  async add(listener: () => void): Promise<() => void> {
    if (this.#closed) throw new Error('The store is closed');
    this.#listeners.add(listener);
    try {
      await this.#listening();
    } catch (error) {
      this.#listeners.delete(listener);
      throw error;
    }
    return () => {
      this.#listeners.delete(listener);
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#listeners.clear();
    const client = await this.#client?.catch(() => undefined);
    this.#client = undefined;
    await client?.end().catch(() => {});
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
    client.on('notification', () => this.#wake());
    // An error is followed by 'end'; without a listener it would crash the process.
    client.on('error', () => {});
    client.on('end', () => {
      if (listening) this.#lost();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
    listening = true;
    return client;
  }

  /** The connection ended without close(): a server restart, a network cut. */
  #lost(): void {
    if (this.#closed) return;
    this.#client = undefined;
    this.#reconnect();
  }

  #reconnect(): void {
    if (this.#closed || this.#listeners.size === 0) return;
    const timer = setTimeout(() => {
      if (this.#closed) return;
      this.#listening().then(
        () => this.#wake(),
        () => this.#reconnect(),
      );
    }, RECONNECT_DELAY_MS);
    timer.unref();
  }

  #wake(): void {
    for (const listener of this.#listeners) listener();
  }
}
