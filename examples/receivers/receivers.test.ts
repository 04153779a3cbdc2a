/** Each receiver example, on the wire: a signed delivery is acknowledged once, a repeat is dropped, a forged one refused. */
import { afterEach, describe, expect, it } from 'vitest';
import type { WebhookMessage } from '@appliance-cloud/client';
import { newWebhookSecret, signatureHeaders } from '../../src/delivery/sign.js';
import { startExpressReceiver } from './express.js';
import { startFastifyReceiver } from './fastify.js';
import { startHonoReceiver } from './hono.js';
import { startNodeHttpReceiver } from './node-http.js';
import type { ReceiverOptions, RunningReceiver } from './receiver.js';

const RECEIVERS: Record<string, (options: ReceiverOptions) => Promise<RunningReceiver>> = {
  'node:http': startNodeHttpReceiver,
  Express: startExpressReceiver,
  Fastify: startFastifyReceiver,
  Hono: startHonoReceiver,
};

const body = JSON.stringify({
  messageId: 'kVuV69kGTS25FUs1wrkECQ',
  timestamp: '2025-01-09T04:24:35.540658',
  event: { pushType: 'DEVICE_STATUS', serviceId: 's', deviceId: 'd', deviceType: 'DEVICE_DRYER', report: { runState: { currentState: 'RUNNING' } }, userList: ['u'] },
});

function deliver(url: string, secret: string, payload = body) {
  const headers = signatureHeaders({ messageId: 'kVuV69kGTS25FUs1wrkECQ', timestamp: Math.floor(Date.now() / 1000), body, secrets: [secret] });
  return fetch(url, { method: 'POST', headers: { ...headers, 'webhook-sequence': '1', 'content-type': 'application/json' }, body: payload });
}

describe.each(Object.entries(RECEIVERS))('the %s receiver', (_name, start) => {
  let receiver: RunningReceiver | undefined;
  afterEach(() => receiver?.close());

  it('acknowledges a signed delivery with 204 and hands on the message once, even when delivered twice', async () => {
    const secret = newWebhookSecret();
    const received: WebhookMessage[] = [];
    receiver = await start({ secrets: [secret], onMessage: (message) => void received.push(message) });
    expect((await deliver(receiver.url, secret)).status).toBe(204);
    expect((await deliver(receiver.url, secret)).status).toBe(204);
    expect(received).toHaveLength(1);
    const [message] = received;
    expect(message?.pushType === 'DEVICE_STATUS' && message.event.deviceType === 'DEVICE_DRYER' && message.event.report.runState?.currentState).toBe('RUNNING');
  });

  it('answers 500 when handling fails, stays up, and hands the retry on again', async () => {
    const secret = newWebhookSecret();
    const received: WebhookMessage[] = [];
    let failures = 1;
    receiver = await start({
      secrets: [secret],
      onMessage: (message) => {
        if (failures-- > 0) throw new Error('the database is down');
        received.push(message);
      },
    });
    expect((await deliver(receiver.url, secret)).status).toBe(500);
    expect((await deliver(receiver.url, secret)).status).toBe(204);
    expect((await deliver(receiver.url, secret)).status).toBe(204);
    expect(received).toHaveLength(1);
  });

  it('acknowledges a repeat that comes while the first delivery is still being handled only with its outcome: a failure is retried, not lost', async () => {
    const secret = newWebhookSecret();
    const received: WebhookMessage[] = [];
    let failFirst: ((error: Error) => void) | undefined;
    receiver = await start({
      secrets: [secret],
      onMessage: (message) => (failFirst ? void received.push(message) : new Promise<void>((_resolve, reject) => (failFirst = reject))),
    });
    // The server gave up on a slow attempt (its timeout is 10 s) and sent the message again while the first was still being handled.
    const first = deliver(receiver.url, secret);
    while (!failFirst) await new Promise((resolve) => setTimeout(resolve, 10));
    const repeat = deliver(receiver.url, secret);
    await new Promise((resolve) => setTimeout(resolve, 500));
    failFirst(new Error('the database is down'));
    expect((await first).status).toBe(500);
    expect((await repeat).status).toBe(500);
    expect((await deliver(receiver.url, secret)).status).toBe(204);
    expect(received).toHaveLength(1);
  });

  it('refuses with 400 a body that is not the one signed, and a signature of another secret', async () => {
    const secret = newWebhookSecret();
    const received: WebhookMessage[] = [];
    receiver = await start({ secrets: [secret], onMessage: (message) => void received.push(message) });
    expect((await deliver(receiver.url, secret, body.replace('RUNNING', 'END'))).status).toBe(400);
    expect((await deliver(receiver.url, newWebhookSecret())).status).toBe(400);
    expect(received).toEqual([]);
  });
});
