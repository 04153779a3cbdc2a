/** verifyWebhook against the server's signer, the public Standard Webhooks library, and a sandbox delivering for real. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SequenceOrderer, verifyWebhook, WebhookVerificationError, type WebhookMessage } from '@appliance-cloud/client';
import { newWebhookSecret, signatureHeaders } from '../../../src/delivery/sign.js';
import { startSandbox, type Sandbox } from './sandbox.js';

const body = JSON.stringify({
  messageId: 'kVuV69kGTS25FUs1wrkECQ',
  timestamp: '2025-01-09T04:24:35.540658',
  push: { pushType: 'DEVICE_PUSH', serviceId: 's', deviceId: 'd', deviceType: 'DEVICE_WASHER', pushCode: 'WASHING_IS_COMPLETE', userList: ['u'] },
});
const now = () => Math.floor(Date.now() / 1000);

function signed(secrets: string[], at = now(), extra: Record<string, string> = {}) {
  return { ...signatureHeaders({ messageId: 'kVuV69kGTS25FUs1wrkECQ', timestamp: at, body, secrets }), 'webhook-sequence': '7', ...extra };
}

async function failure(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(WebhookVerificationError);
  return (error as WebhookVerificationError).reason;
}

describe('verifyWebhook', () => {
  const secret = newWebhookSecret();

  it('accepts what the server signs and gives the message discriminated by pushType, with its delivery headers', async () => {
    const message = await verifyWebhook(signed([secret]), body, secret);
    expect(message.pushType).toBe('DEVICE_PUSH');
    if (message.pushType !== 'DEVICE_PUSH') throw new Error('narrowing');
    expect(message.push.pushCode).toBe('WASHING_IS_COMPLETE');
    expect(message.delivery).toEqual({ webhookId: 'kVuV69kGTS25FUs1wrkECQ', timestamp: expect.any(Number), sequence: 7 });
  });

  it('accepts a Fetch Headers object and bytes as well as a record and a string', async () => {
    const message = await verifyWebhook(new Headers(signed([secret])), new TextEncoder().encode(body), [secret]);
    expect(message.messageId).toBe('kVuV69kGTS25FUs1wrkECQ');
  });

  it('agrees with the public standardwebhooks library in both directions', async () => {
    const library = new Webhook(secret);
    const at = new Date();
    const signature = library.sign('msg_1', at, body);
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature };
    await expect(verifyWebhook(headers, body, secret)).resolves.toMatchObject({ pushType: 'DEVICE_PUSH' });
    expect(library.verify(body, signed([secret]))).toBeTruthy();
  });

  it('verifies during a rotation with either secret, and accepts several secrets of its own', async () => {
    const next = newWebhookSecret();
    await expect(verifyWebhook(signed([next, secret]), body, secret)).resolves.toBeTruthy();
    await expect(verifyWebhook(signed([secret]), body, [next, secret])).resolves.toBeTruthy();
  });

  it('refuses a changed body, a wrong secret, missing headers, a stale or future timestamp, and a body that is no message', async () => {
    expect(await failure(verifyWebhook(signed([secret]), body.replace('WASHING', 'DRYING'), secret))).toBe('no-matching-signature');
    expect(await failure(verifyWebhook(signed([newWebhookSecret()]), body, secret))).toBe('no-matching-signature');
    expect(await failure(verifyWebhook({ 'webhook-id': 'x' }, body, secret))).toBe('missing-headers');
    // The verifier's clock held at the signing second: read again, a second that turns in between put +301 inside the window.
    const at = now();
    const clock = { now: () => at * 1000 };
    expect(await failure(verifyWebhook(signed([secret], at - 301), body, secret, clock))).toBe('timestamp-too-old');
    expect(await failure(verifyWebhook(signed([secret], at + 301), body, secret, clock))).toBe('timestamp-too-new');
    expect(await failure(verifyWebhook(signed([secret], now(), { 'webhook-timestamp': 'soon' }), body, secret))).toBe('bad-timestamp');
    const notAMessage = '{"hello":1}';
    const headers = signatureHeaders({ messageId: 'm', timestamp: now(), body: notAMessage, secrets: [secret] });
    expect(await failure(verifyWebhook({ ...headers }, notAMessage, secret))).toBe('bad-body');
  });

  it('takes the clock and window from the caller', async () => {
    const at = now() - 3600;
    await expect(verifyWebhook(signed([secret], at), body, secret, { now: () => at * 1000 })).resolves.toBeTruthy();
    expect(await failure(verifyWebhook(signed([secret], now() - 20), body, secret, { toleranceSeconds: 10 }))).toBe('timestamp-too-old');
  });
});

describe('deliveries of a sandbox process, verified', () => {
  let sandbox: Sandbox;
  let receiver: Server;
  const received: WebhookMessage[] = [];
  const refusals: string[] = [];

  beforeAll(async () => {
    let secret = '';
    receiver = createServer(async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      try {
        received.push(await verifyWebhook(request.headers, Buffer.concat(chunks), secret));
        response.writeHead(204).end();
      } catch (error) {
        refusals.push(String(error));
        response.writeHead(400).end();
      }
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    sandbox = await startSandbox({ CALLBACK_URL: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks` });
    secret = sandbox.credentials.webhookSecret;
  });
  afterAll(async () => {
    await sandbox?.stop();
    receiver?.close();
  });

  /** Waits until a message of each kind about the device has come; virtual appliances may add more. */
  async function until(deviceId: string, kinds: string[]): Promise<WebhookMessage[]> {
    const about = () => received.filter((m) => ('push' in m ? m.push.deviceId : m.event.deviceId) === deviceId);
    for (let i = 0; i < 300 && !kinds.every((kind) => about().some((m) => m.pushType === kind)); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(refusals).toEqual([]);
    expect(about().map((m) => m.pushType)).toEqual(expect.arrayContaining(kinds));
    return about();
  }

  it('verifies a DEVICE_STATUS event, a DEVICE_PUSH and a DEVICE_ALIAS_CHANGED, in sequence order for the device', async () => {
    const client = sandbox.client();
    await client.listDevices();
    const fridge = client.device('DEVICE_REFRIGERATOR', sandbox.deviceOf('DEVICE_REFRIGERATOR'));
    await client.subscribeEvents(fridge.deviceId);
    await client.subscribePush(fridge.deviceId);
    await fridge.control({ temperatureInUnits: { locationName: 'FRIDGE', targetTemperatureC: 5 } });
    await until(fridge.deviceId, ['DEVICE_STATUS']);
    await sandbox.admin('POST', `/admin/devices/${fridge.deviceId}/push`, { pushCode: 'DOOR_IS_OPEN' });
    await until(fridge.deviceId, ['DEVICE_PUSH']);
    await sandbox.admin('PATCH', `/admin/devices/${fridge.deviceId}`, { alias: 'Kitchen fridge' });
    const ofFridge = await until(fridge.deviceId, ['DEVICE_STATUS', 'DEVICE_PUSH', 'DEVICE_ALIAS_CHANGED']);

    const targets = ofFridge.flatMap((m) =>
      m.pushType === 'DEVICE_STATUS' && m.event.deviceType === 'DEVICE_REFRIGERATOR'
        ? (m.event.report.temperatureInUnits ?? []).filter((e) => e.locationName === 'FRIDGE').map((e) => e.targetTemperatureC)
        : [],
    );
    expect(targets).toContain(5);
    expect(ofFridge.flatMap((m) => (m.pushType === 'DEVICE_PUSH' ? [m.push.pushCode] : []))).toContain('DOOR_IS_OPEN');
    expect(ofFridge.flatMap((m) => (m.pushType === 'DEVICE_ALIAS_CHANGED' ? [m.push.alias] : []))).toEqual(['Kitchen fridge']);
    for (const message of ofFridge) expect(message.delivery.webhookId).toBe(message.messageId);
    const sequences = ofFridge.map((m) => m.delivery.sequence!);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    // Handed to the orderer in reverse, they are handled in the order they occurred.
    const orderer = new SequenceOrderer();
    const handled: number[] = [];
    const [first, ...rest] = ofFridge;
    await orderer.run(first!, (m) => void handled.push(m.delivery.sequence!));
    await Promise.all([...rest].reverse().map((m) => orderer.run(m, () => void handled.push(m.delivery.sequence!))));
    expect(handled).toEqual(sequences);
  });
});
