import { describe, expect, it } from 'vitest';
import { describeDelivery } from '../../src/listen/describe.js';

const message = (payload: Record<string, unknown>, kind = 'push') => JSON.stringify({ messageId: 'm', timestamp: 't', [kind]: payload });

describe('a delivery as listen prints it', () => {
  it('a push: its code, the signature and where it was forwarded', () => {
    const body = message({ pushType: 'DEVICE_PUSH', deviceId: 'd1', pushCode: 'WASHING_IS_COMPLETE' });
    expect(describeDelivery({ body, verified: true, forwarded: 200 })).toBe('DEVICE_PUSH  d1  WASHING_IS_COMPLETE  signature ✓  → forwarded, 200');
    // Ids are shown whole, however long (a device id is 64 characters).
    const id = 'f'.repeat(64);
    expect(describeDelivery({ body: message({ pushType: 'DEVICE_PUSH', deviceId: id, pushCode: 'X' }), verified: true })).toBe(`DEVICE_PUSH  ${id}  X  signature ✓`);
  });

  it('an event: the changed properties, long values cut', () => {
    const body = message({ pushType: 'DEVICE_STATUS', deviceId: 'd2', report: { runState: { currentState: 'RUNNING' }, note: 'x'.repeat(100) } }, 'event');
    expect(describeDelivery({ body, verified: false, reason: 'no-matching-signature' })).toBe(
      `DEVICE_STATUS  d2  runState={"currentState":"RUNNING"} note=${'x'.repeat(59)}…  signature ✗ (no-matching-signature)`,
    );
  });

  it('an event of a device with locations: each change under its location', () => {
    const report = [{ location: { locationName: 'MAIN' }, runState: { currentState: 'RINSING' } }, { location: { locationName: 'MINI' }, remoteControlEnable: { remoteControlEnabled: true } }];
    expect(describeDelivery({ body: message({ pushType: 'DEVICE_STATUS', deviceId: 'd4', report }, 'event'), verified: true })).toBe(
      'DEVICE_STATUS  d4  MAIN:runState={"currentState":"RINSING"} MINI:remoteControlEnable={"remoteControlEnabled":true}  signature ✓',
    );
  });

  it('lifecycle messages, a forward that failed, and a body that is not a message', () => {
    expect(describeDelivery({ body: message({ pushType: 'DEVICE_ALIAS_CHANGED', deviceId: 'd3', alias: 'Den' }), verified: true, forwarded: 'ECONNREFUSED' }))
      .toBe('DEVICE_ALIAS_CHANGED  d3  now "Den"  signature ✓  → not forwarded: ECONNREFUSED');
    expect(describeDelivery({ body: 'hello', verified: false, reason: 'missing-headers' })).toBe('not a message  -  signature ✗ (missing-headers)');
  });

  it('a body nested past the JSON depth limit, or naming inherited names, is shown as not a message', () => {
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    expect(describeDelivery({ body: deep, verified: false })).toBe('not a message  -  signature ✗ (no match)');
    const inherited = JSON.stringify({ push: { constructor: 'x', __proto__: 'y' } });
    expect(describeDelivery({ body: inherited, verified: false })).toBe('not a message  -  signature ✗ (no match)');
  });

  it('fields that are not strings are shown as JSON, even one that cannot be made a string', () => {
    const body = message({ pushType: { toString: 0 }, deviceId: 7, pushCode: ['A'] });
    expect(describeDelivery({ body, verified: false })).toBe('{"toString":0}  7  signature ✗ (no match)');
    const renamed = message({ pushType: 'DEVICE_ALIAS_CHANGED', deviceId: 'd5', alias: { valueOf: 1 } });
    expect(describeDelivery({ body: renamed, verified: true })).toBe('DEVICE_ALIAS_CHANGED  d5  now "{"valueOf":1}"  signature ✓');
  });
});
