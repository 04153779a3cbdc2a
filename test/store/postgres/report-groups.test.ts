/** The group commit of device reports on PostgreSQL, as pure logic: which calls go together, and who is answered what. */
import { describe, expect, it } from 'vitest';
import { ReportGroups, type Outcome } from '../../../src/store/postgres/report-groups.js';

interface Call {
  deviceId: string;
  n: number;
}

/** Groups whose write answers each call with its n, keeping the groups it was given. */
function recording(answer: (call: Call) => Outcome<number> = (call) => ({ ok: true, value: call.n })) {
  const groups: Call[][] = [];
  const reports = new ReportGroups<Call, number>(async (calls) => {
    groups.push(calls);
    await new Promise((resolve) => setTimeout(resolve, 5));
    return calls.map(answer);
  });
  return { reports, groups };
}

describe('groups of reports', () => {
  it('writes the calls of one turn in one group, and answers each with its own outcome', async () => {
    const { reports, groups } = recording();
    const answers = await Promise.all([1, 2, 3].map((n) => reports.run({ deviceId: `D${n}`, n })));
    expect(answers).toEqual([1, 2, 3]);
    expect(groups.map((g) => g.map((c) => c.n))).toEqual([[1, 2, 3]]);
  });

  it('gathers what is asked for while a group is written into the next one', async () => {
    const { reports, groups } = recording();
    const first = reports.run({ deviceId: 'D1', n: 1 });
    await new Promise((resolve) => setTimeout(resolve, 1));
    const later = [2, 3].map((n) => reports.run({ deviceId: `D${n}`, n }));
    await Promise.all([first, ...later]);
    expect(groups.map((g) => g.map((c) => c.n))).toEqual([[1], [2, 3]]);
  });

  it("takes one call per device in a group, so that a device's calls are written in the order they came", async () => {
    const { reports, groups } = recording();
    const calls = [
      { deviceId: 'D1', n: 1 },
      { deviceId: 'D1', n: 2 },
      { deviceId: 'D2', n: 3 },
      { deviceId: 'D1', n: 4 },
    ];
    await Promise.all(calls.map((call) => reports.run(call)));
    expect(groups.map((g) => g.map((c) => c.n))).toEqual([[1, 3], [2], [4]]);
  });

  it('refuses the calls the write refuses, and every call of a group whose write throws', async () => {
    const refusing = recording((call) => (call.n === 2 ? { ok: false, error: new Error('moved') } : { ok: true, value: call.n }));
    const outcomes = await Promise.allSettled([1, 2].map((n) => refusing.reports.run({ deviceId: `D${n}`, n })));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected']);

    const failing = new ReportGroups<Call, number>(async () => {
      throw new Error('connection lost');
    });
    const failed = await Promise.allSettled([1, 2].map((n) => failing.run({ deviceId: `D${n}`, n })));
    expect(failed.map((o) => (o.status === 'rejected' ? String(o.reason) : o.value))).toEqual(['Error: connection lost', 'Error: connection lost']);
  });

  it('is settled once every call asked for has been written and answered', async () => {
    const { reports, groups } = recording();
    const answered: number[] = [];
    for (const n of [1, 2]) void reports.run({ deviceId: 'D1', n }).then((value) => answered.push(value));
    await reports.settled();
    expect(groups).toHaveLength(2);
    expect(answered).toEqual([1, 2]);
  });
});
