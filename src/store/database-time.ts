/**
 * A node's clock on a shared database: its own, set to the database's time. Nodes compare each
 * other's times in the store (delivery leases, retry times, rate-limit windows): a node whose clock
 * ran 40 s ahead took over leases others still held and delivered their messages twice. The offset
 * is measured at start and again every minute, to within half a round trip.
 */
import { systemClock, type Clock } from '../ids.js';
import type { SharedClock, StoreCapabilities } from './store.js';

/** Samples per measurement: the one with the shortest round trip is the most exact. */
const SAMPLES = 3;
const RESYNC_MS = 60_000;

export class DatabaseTime implements Clock {
  #offsetMs = 0;
  #timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly shared: SharedClock,
    private readonly base: Clock,
  ) {}

  /** Measured once before it is used; a later measurement that fails keeps the last offset. */
  static async start(shared: SharedClock, base: Clock = systemClock, resyncMs = RESYNC_MS): Promise<DatabaseTime> {
    const time = new DatabaseTime(shared, base);
    await time.sync();
    time.#timer = setInterval(() => time.sync().catch(() => undefined), resyncMs).unref();
    return time;
  }

  now(): number {
    return this.base.now() + this.#offsetMs;
  }

  /** The database's time minus the node's, taken midway through the fastest of a few round trips. */
  async sync(): Promise<void> {
    let best: { roundTrip: number; offset: number } | undefined;
    for (let i = 0; i < SAMPLES; i++) {
      const sent = this.base.now();
      const database = await this.shared.databaseNow();
      const received = this.base.now();
      const roundTrip = received - sent;
      if (!best || roundTrip < best.roundTrip) best = { roundTrip, offset: database - (sent + received) / 2 };
    }
    this.#offsetMs = best!.offset;
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}

/** The clock a process on a store keeps: the database's time on a shared database, else its own. */
export async function processClock(capabilities: StoreCapabilities): Promise<{ clock: Clock; stop: () => void }> {
  if (!capabilities.sharedClock) return { clock: systemClock, stop: () => undefined };
  const time = await DatabaseTime.start(capabilities.sharedClock);
  return { clock: time, stop: () => time.stop() };
}
