import { describe, expect, it } from 'vitest';
import { answerOnce, guard } from '../../src/gateway/guard.js';
import { createMetrics } from '../../src/metrics.js';

function reporting() {
  const errors: { details: Record<string, unknown>; message: string }[] = [];
  const log = () => undefined;
  const logger = { debug: log, info: log, warn: log, error: (details: object, message: string) => errors.push({ details: details as Record<string, unknown>, message }) };
  const metrics = createMetrics({ connectedDevices: async () => 0 });
  const faults = async (hook: string) => (await metrics.brokerFaults.get()).values.find((v) => v.labels.hook === hook)?.value ?? 0;
  return { logger, metrics, errors, faults };
}

describe('guard: nothing thrown in a broker hook escapes (DESIGN J)', () => {
  it('logs, counts and refuses what a hook throws', async () => {
    const r = reporting();
    const refusals: Error[] = [];
    guard(r, 'authorizePublish', { clientId: 'dev-1' }, () => {
      throw new RangeError('Maximum call stack size exceeded');
    }, (error) => refusals.push(error));
    expect(refusals.map((e) => e.message)).toEqual(['Maximum call stack size exceeded']);
    expect(r.errors).toMatchObject([{ details: { clientId: 'dev-1', hook: 'authorizePublish' } }]);
    expect(await r.faults('authorizePublish')).toBe(1);
  });

  it('does the same for a promise the hook returns that rejects, and for a thrown non-error', async () => {
    const r = reporting();
    const refusals: Error[] = [];
    guard(r, 'handleMessage', {}, async () => {
      throw new TypeError('no such property');
    }, (error) => refusals.push(error));
    guard(r, 'handleMessage', {}, () => {
      throw 'a string';
    }, (error) => refusals.push(error));
    await expect.poll(() => refusals.map((e) => e.message)).toEqual(['a string', 'no such property']);
    expect(await r.faults('handleMessage')).toBe(2);
  });

  it('lets a hook that does not throw answer alone', async () => {
    const r = reporting();
    const answers: string[] = [];
    guard(r, 'authorizeSubscribe', {}, () => answers.push('granted'), () => answers.push('refused'));
    expect(answers).toEqual(['granted']);
    expect(await r.faults('authorizeSubscribe')).toBe(0);
  });

  it('logs a refusal that throws too, instead of throwing it', () => {
    const r = reporting();
    const run = () =>
      guard(r, 'authenticate', {}, () => {
        throw new Error('store down');
      }, () => {
        throw new Error('socket gone');
      });
    expect(run).not.toThrow();
    expect(r.errors.map((e) => (e.details.err as Error).message)).toEqual(['store down', 'socket gone']);
  });
});

describe('answerOnce', () => {
  it('answers the first time only, so a refusal after an answer goes unheard', () => {
    const heard: unknown[] = [];
    const answer = answerOnce((error: Error | null) => heard.push(error));
    answer(null);
    answer(new Error('late'));
    expect(heard).toEqual([null]);
  });
});
