/** cloneJson: the copies the catalog and the simulator make of statuses, reports and memory; show: values in messages. */
import { describe, expect, it } from 'vitest';
import { cloneJson, show } from '../../src/catalog/values.js';

describe('cloneJson', () => {
  it('copies a JSON value all the way down, equal and sharing nothing', () => {
    const status = { airFlow: { windStrength: 'LOW' }, list: [{ n: 1, on: true }, null, 'x'], empty: {}, zero: 0 };
    const copy = cloneJson(status);
    expect(copy).toEqual(status);
    expect(copy.airFlow).not.toBe(status.airFlow);
    expect(copy.list[0]).not.toBe(status.list[0]);
    copy.airFlow.windStrength = 'TURBO';
    expect(status.airFlow.windStrength).toBe('LOW');
    expect([cloneJson(null), cloneJson(3), cloneJson('s'), cloneJson(false)]).toEqual([null, 3, 's', false]);
  });

  it('keeps a __proto__ key as a key, as structuredClone does, without touching the prototype', () => {
    const status = JSON.parse('{"__proto__":{"polluted":true},"a":1}') as Record<string, unknown>;
    const copy = cloneJson(status);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['__proto__', 'a']);
    expect(Object.hasOwn(copy, '__proto__')).toBe(true);
    expect(copy).toEqual(structuredClone(status));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('show', () => {
  it('names a value as JSON text, and what JSON text cannot hold as it is', () => {
    expect([show('x'), show(3), show(null), show(undefined)]).toEqual(['"x"', '3', 'null', 'nothing']);
    expect([show(JSON.parse('1e400')), show(JSON.parse('-1e400'))]).toEqual(['Infinity', '-Infinity']);
  });
});
