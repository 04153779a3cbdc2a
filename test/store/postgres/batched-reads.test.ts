/** Reads by key asked for in one turn, read in one statement: as pure logic. */
import { describe, expect, it } from 'vitest';
import { BatchedReads } from '../../../src/store/postgres/batched-reads.js';

describe('batched reads', () => {
  it("reads the keys asked for in one turn together, each key once, and gives every reader its key's row", async () => {
    const loads: string[][] = [];
    const reads = new BatchedReads<string>(async (keys) => {
      loads.push(keys);
      return new Map(keys.filter((k) => k !== 'none').map((k) => [k, `row of ${k}`]));
    });
    const rows = await Promise.all(['a', 'b', 'a', 'none'].map((key) => reads.read(key)));
    expect(rows).toEqual(['row of a', 'row of b', 'row of a', undefined]);
    expect(loads).toEqual([['a', 'b', 'none']]);

    expect(await reads.read('c')).toBe('row of c');
    expect(loads).toHaveLength(2);
  });

  it('refuses every reader of a load that fails, and reads again on the next turn', async () => {
    let fail = true;
    const reads = new BatchedReads<string>(async (keys) => {
      if (fail) throw new Error('connection lost');
      return new Map(keys.map((k) => [k, k]));
    });
    const outcomes = await Promise.allSettled([reads.read('a'), reads.read('b')]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect(await reads.read('a')).toBe('a');
  });
});
