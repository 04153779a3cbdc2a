/**
 * What recording a message reads that rarely changes (a device's event subscribers, whether a
 * service can take a kind of message now), kept per database while `recording_generation` stands:
 * every change it depends on moves that number, from this process or another on the file (migration
 * 013). Call inside the write transaction that records, which holds the lock until it commits, so
 * that nobody moves the number between the check and the use.
 */
import type { Sql } from './database.js';

/** Entries kept at most; beyond it all go at once, a bound on memory. */
const CAPACITY = 20_000;

interface Kept {
  generation: number;
  /** The group (see Sql.group) in which the generation was last read. */
  checkedIn: object | null;
  /** By what is kept, then by whose: no key text joined (and hashed) per lookup. */
  values: Map<string, Map<string, unknown>>;
  size: number;
}

const keptBy = new WeakMap<Sql, Kept>();

/** The `what` of `whose` (a service's, a device's) as kept, or `read()`'s, kept. */
export function keptLookup<T>(sql: Sql, what: string, whose: string, read: () => T): T {
  let kept = keptBy.get(sql);
  if (!kept) keptBy.set(sql, (kept = { generation: -1, checkedIn: null, values: new Map(), size: 0 }));
  // A group's works only record, and recording changes none of it: one read of the number per
  // group. Any other transaction may have changed it just before, so it reads the number each time.
  if (sql.group === null || kept.checkedIn !== sql.group) {
    const generation = sql.rows<[number]>('SELECT n FROM recording_generation')[0]![0];
    if (generation !== kept.generation) {
      forget(kept);
      kept.generation = generation;
    }
    kept.checkedIn = sql.group;
  }
  let values = kept.values.get(what);
  if (values?.has(whose)) return values.get(whose) as T;
  const value = read();
  if (kept.size >= CAPACITY) forget(kept);
  if (!values) kept.values.set(what, (values = new Map()));
  values.set(whose, value);
  kept.size += 1;
  return value;
}

function forget(kept: Kept): void {
  kept.values.clear();
  kept.size = 0;
}
