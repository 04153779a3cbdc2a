/**
 * The chaos run's ledger: every accepted report must come back as a delivered DEVICE_STATUS carrying
 * its counter, once per webhook-id, in the order of webhook-sequence.
 */
import { describe, expect, it } from 'vitest';
import { account, changesOf, type Accepted, type Arrival, type Source } from '../../bench/chaos/accounting.js';

const accepted = (deviceId: string, source: Source, n: number): Accepted => ({ deviceId, source, n, sentAt: 0, at: 0 });

function arrival(webhookId: string, deviceId: string, sequence: number, chaos: Record<string, number> | null, pushType = 'DEVICE_STATUS'): Arrival {
  const report = chaos === null ? { airFlow: { windStrength: 'LOW' } } : { chaos };
  return { webhookId, deviceId, sequence, pushType, changes: changesOf(report), body: JSON.stringify({ webhookId, report }) };
}

describe('changesOf', () => {
  it('reads the numeric counters of the chaos resource and nothing else', () => {
    expect(changesOf({ chaos: { mqtt: 3, admin: 'x', control: 4, other: 5 }, airFlow: { windStrength: 'LOW' } })).toEqual([
      { source: 'mqtt', n: 3 },
      { source: 'control', n: 4 },
    ]);
    expect(changesOf({ airFlow: {} })).toEqual([]);
    expect(changesOf([{ chaos: { mqtt: 1 } }])).toEqual([]);
    expect(changesOf(undefined)).toEqual([]);
  });
});

describe('account', () => {
  it('finds every accepted report in the delivered messages', () => {
    const result = account(
      [accepted('d1', 'mqtt', 1), accepted('d1', 'admin', 1), accepted('d2', 'control', 1)],
      [arrival('a', 'd1', 1, { mqtt: 1 }), arrival('b', 'd1', 2, { admin: 1 }), arrival('c', 'd2', 1, { control: 1 })],
    );
    expect(result).toEqual({
      accepted: 3,
      delivered: 3,
      lost: [],
      duplicatesSameId: 0,
      duplicatesNewId: 0,
      sameIdOtherBody: 0,
      orderViolations: 0,
      reportOrderViolations: 0,
      lateReports: [],
      orderExamples: [],
      unanswered: 0,
      foreign: 0,
    });
  });

  it('counts an accepted report that no message carries as lost', () => {
    const result = account([accepted('d1', 'mqtt', 1), accepted('d1', 'mqtt', 2)], [arrival('a', 'd1', 1, { mqtt: 1 })]);
    expect(result.lost).toEqual([accepted('d1', 'mqtt', 2)]);
  });

  it('tells a message sent again under its webhook-id from a change delivered under a new one', () => {
    const again = arrival('a', 'd1', 1, { mqtt: 1 });
    const result = account([accepted('d1', 'mqtt', 1)], [again, again, arrival('b', 'd1', 2, { mqtt: 1 })]);
    expect([result.delivered, result.duplicatesSameId, result.duplicatesNewId, result.lost.length]).toEqual([2, 1, 1, 0]);
  });

  it('flags a webhook-id that came back with another body', () => {
    const first = arrival('a', 'd1', 1, { mqtt: 1 });
    const result = account([accepted('d1', 'mqtt', 1)], [first, { ...first, body: `${first.body} ` }]);
    expect([result.sameIdOtherBody, result.duplicatesSameId]).toEqual([1, 0]);
  });

  it('counts a message received after one of a higher sequence of the same device as out of order', () => {
    const result = account(
      [],
      [arrival('a', 'd1', 2, { admin: 2 }), arrival('b', 'd2', 1, { admin: 1 }), arrival('c', 'd1', 1, { admin: 1 }), arrival('a', 'd1', 2, { admin: 2 })],
    );
    expect(result.orderViolations).toBe(1);
    expect(result.orderExamples).toEqual(['d1: sequence 1 arrived after sequence 2']);
  });

  it('counts a report applied after a later report of the same source, and names the late one', () => {
    const result = account([accepted('d1', 'mqtt', 1), accepted('d1', 'mqtt', 2), accepted('d1', 'admin', 1)], [arrival('a', 'd1', 1, { mqtt: 2 }), arrival('b', 'd1', 2, { admin: 1 }), arrival('c', 'd1', 3, { mqtt: 1 })]);
    expect([result.orderViolations, result.reportOrderViolations]).toEqual([0, 1]);
    expect(result.orderExamples).toEqual(['d1: mqtt #1 has sequence 3, after #2 at sequence 1']);
    expect(result.lateReports).toEqual([accepted('d1', 'mqtt', 1)]);
  });

  it('sets apart changes whose request went unanswered, changes the load did not make, and pushes', () => {
    const result = account(
      [],
      [arrival('a', 'd1', 1, { control: 7 }), arrival('b', 'd1', 2, null), arrival('c', 'd1', 3, null, 'DEVICE_REGISTERED')],
    );
    expect([result.delivered, result.unanswered, result.foreign]).toEqual([2, 1, 1]);
  });
});
