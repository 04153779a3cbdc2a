/** Timeouts, AbortSignal and the retries of DESIGN I, on the wire. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApplianceCloud, isApplianceCloudError } from '@appliance-cloud/client';
import { startSandbox, type Sandbox } from './sandbox.js';

/** A fetch that counts the attempts it makes. */
function countingFetch() {
  const counter = { attempts: 0, messageIds: [] as string[] };
  const counted: typeof fetch = (input, init) => {
    counter.attempts++;
    counter.messageIds.push(new Headers(init?.headers).get('x-message-id') ?? '');
    return fetch(input, init);
  };
  return { counter, fetch: counted };
}

const CREDENTIALS = { serviceId: 's', serviceKey: 'k', countryCode: 'KR', accessToken: 't' };

describe('retry of 1306/429 after Retry-After (a sandbox allowing one request a second)', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '1' });
  });
  afterAll(() => sandbox?.stop());

  it('waits as told and succeeds, with a fresh message id per attempt, for reads and writes alike', async () => {
    const { counter, fetch } = countingFetch();
    const client = sandbox.client({ fetch });
    await client.listDevices();
    const started = Date.now();
    await client.subscribePush(sandbox.deviceOf('DEVICE_WASHER'));
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(counter.attempts).toBe(3);
    expect(new Set(counter.messageIds).size).toBe(3);
  });

  it('throws 1306 at once when the server asks for a longer wait than maxRetryDelayMs', async () => {
    const { counter, fetch } = countingFetch();
    const client = sandbox.client({ fetch, maxRetryDelayMs: 500 });
    await client.getUser().catch(() => undefined);
    const before = counter.attempts;
    const error = await client.getUser().catch((e: unknown) => e);
    expect(isApplianceCloudError(error, '1306')).toBe(true);
    expect(counter.attempts - before).toBe(1);
  });

  it('throws 1306 with the Retry-After when retries are used up', async () => {
    const client = sandbox.client({ maxRetries: 0 });
    await client.getUser().catch(() => undefined);
    const error = await client.getUser().catch((e: unknown) => e);
    expect(isApplianceCloudError(error, '1306')).toBe(true);
    expect(error).toMatchObject({ httpStatus: 429, retryAfterSeconds: 1 });
  });
});

describe('network failures, timeouts and aborts', () => {
  let silent: Server;
  let silentUrl: string;
  let closedUrl: string;
  let proxy: Server;
  let proxyUrl: string;

  beforeAll(async () => {
    // Accepts connections and never answers: what a hung upstream looks like.
    silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    closedUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    // A proxy in front of the interface that answers for it: its page is not an envelope.
    proxy = createServer((_request, response) => response.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad Gateway</h1>'));
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    silent.closeAllConnections();
    silent.close();
    proxy.close();
  });

  it("throws BAD_RESPONSE with the HTTP status when the answer is not the interface's envelope", async () => {
    const error = await new ApplianceCloud({ baseUrl: proxyUrl, ...CREDENTIALS }).getUser().catch((e: unknown) => e);
    expect(isApplianceCloudError(error, 'BAD_RESPONSE')).toBe(true);
    expect(error).toMatchObject({ httpStatus: 502, message: expect.stringContaining('Bad Gateway') });
  });

  it('retries a read after a network failure, then throws NETWORK', async () => {
    const { counter, fetch } = countingFetch();
    const error = await new ApplianceCloud({ baseUrl: closedUrl, ...CREDENTIALS, fetch }).listDevices().catch((e: unknown) => e);
    expect(isApplianceCloudError(error, 'NETWORK')).toBe(true);
    expect(counter.attempts).toBe(3);
  });

  it('never retries a write after a network failure: it may have been applied', async () => {
    const { counter, fetch } = countingFetch();
    const error = await new ApplianceCloud({ baseUrl: closedUrl, ...CREDENTIALS, fetch }).control('d', {}).catch((e: unknown) => e);
    expect(isApplianceCloudError(error, 'NETWORK')).toBe(true);
    expect(counter.attempts).toBe(1);
  });

  it('gives up on an attempt after timeoutMs with TIMEOUT', async () => {
    const client = new ApplianceCloud({ baseUrl: silentUrl, ...CREDENTIALS, timeoutMs: 5_000 });
    const started = Date.now();
    const error = await client.getUser({ timeoutMs: 200 }).catch((e: unknown) => e);
    expect(isApplianceCloudError(error, 'TIMEOUT')).toBe(true);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("rejects with the AbortSignal's reason when the caller aborts", async () => {
    const controller = new AbortController();
    const reason = new Error('the user left');
    setTimeout(() => controller.abort(reason), 100);
    const error = await new ApplianceCloud({ baseUrl: silentUrl, ...CREDENTIALS }).listDevices({ signal: controller.signal }).catch((e: unknown) => e);
    expect(error).toBe(reason);
  });
});
