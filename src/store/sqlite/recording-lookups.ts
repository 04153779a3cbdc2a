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
  values: Map<string, unknown>;
}

const keptBy = new WeakMap<Sql, Kept>();

/** The value kept under `key`, or `read()`'s, kept. */
export function keptLookup<T>(sql: Sql, key: string, read: () => T): T {
  let kept = keptBy.get(sql);
  if (!kept) keptBy.set(sql, (kept = { generation: -1, checkedIn: null, values: new Map() }));
  // A group's works only record, and recording changes none of it: one read of the number per
  // group. Any other transaction may have changed it just before, so it reads the number each time.
  if (sql.group === null || kept.checkedIn !== sql.group) {
    const generation = sql.rows<[number]>('SELECT n FROM recording_generation')[0]![0];
    if (generation !== kept.generation) {
      kept.values.clear();
      kept.generation = generation;
    }
    kept.checkedIn = sql.group;
  }
  if (kept.values.has(key)) return kept.values.get(key) as T;
  const value = read();
  if (kept.values.size >= CAPACITY) kept.values.clear();
  kept.values.set(key, value);
  return value;
}
