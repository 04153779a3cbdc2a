import { afterEach, describe, expect, it } from 'vitest';
import type { DeliverySummary } from '../../src/listen/describe.js';
import { startReceiver, type Receiver } from '../../src/listen/receiver.js';

describe("listen's receiver", () => {
  let receiver: Receiver | undefined;
  afterEach(() => receiver?.close());

  it('refuses a body past its bound with 413 and buffers none of it; a delivery-sized one is taken', async () => {
    const seen: DeliverySummary[] = [];
    receiver = await startReceiver({ secrets: ['whsec_c2VjcmV0'], onDelivery: (summary) => seen.push(summary) });
    const huge = await fetch(receiver.url, { method: 'POST', body: 'x'.repeat(1024 * 1024) }).catch(() => undefined);
    if (huge) expect(huge.status).toBe(413);
    expect(seen).toEqual([]);
    const small = await fetch(receiver.url, { method: 'POST', body: '{"push":{"pushType":"DEVICE_PUSH"}}' });
    expect(small.status).toBe(200);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.verified).toBe(false);
  });

  it('stays up when printing a delivery fails: that request answers 500, the next is taken', async () => {
    let calls = 0;
    receiver = await startReceiver({
      secrets: ['whsec_c2VjcmV0'],
      onDelivery: () => {
        calls += 1;
        if (calls === 1) throw new Error('the terminal went away');
      },
    });
    expect((await fetch(receiver.url, { method: 'POST', body: '{}' })).status).toBe(500);
    expect((await fetch(receiver.url, { method: 'POST', body: '{}' })).status).toBe(200);
  });
});
