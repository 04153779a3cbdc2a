/** Timeouts, AbortSignal and the retries of DESIGN I, on the wire. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApplianceCloud, isApplianceCloudError, oauth } from '@appliance-cloud/client';
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

  it('tells where the service stands in its limit after each answer, a refusal’s too', async () => {
    const client = sandbox.client({ maxRetries: 0 });
    expect(client.rateLimit).toBeUndefined();
    await client.getUser().catch(() => undefined);
    const refused = await client.getUser().catch((e: unknown) => e);
    expect(isApplianceCloudError(refused, '1306')).toBe(true);
    expect(client.rateLimit).toEqual({ limit: 1, remaining: 0 });
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

  it("calls fetch unbound, as Workers' and browsers' fetch requires (called as another object's method it throws Illegal invocation)", async () => {
    const platformFetch = function (this: unknown, input: Parameters<typeof fetch>[0], init?: RequestInit) {
      if (this !== undefined && this !== globalThis) throw new TypeError('Illegal invocation');
      return fetch(input, init);
    };
    const error = await new ApplianceCloud({ baseUrl: proxyUrl, ...CREDENTIALS, fetch: platformFetch }).getUser().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'BAD_RESPONSE', httpStatus: 502 });
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

  it('bounds the wait for the token by the timeout and the signal too: a refresh against a hung authorization server', async () => {
    const { accessToken: _, ...credentials } = CREDENTIALS;
    const tokenProvider = oauth.refreshingTokenProvider({
      metadata: { issuer: silentUrl, authorization_endpoint: `${silentUrl}/oauth/authorize`, token_endpoint: `${silentUrl}/oauth/token` },
      client: { clientId: 's', clientSecret: 'k' },
      store: { load: async () => ({ accessToken: 'at', tokenType: 'Bearer', expiresAt: 0, refreshToken: 'rt' }), save: async () => undefined },
    });
    const client = new ApplianceCloud({ baseUrl: silentUrl, ...credentials, tokenProvider });
    const timedOut = await client.getUser({ timeoutMs: 200 }).catch((e: unknown) => e);
    expect(isApplianceCloudError(timedOut, 'TIMEOUT')).toBe(true);
    const controller = new AbortController();
    const reason = new Error('the user left');
    setTimeout(() => controller.abort(reason), 200);
    const aborted = await client.getUser({ signal: controller.signal }).catch((e: unknown) => e);
    expect(aborted).toBe(reason);
  }, 5_000);

  it('with a signal aborted already, rejects with its reason and leaves no rejection of the token provider unheard', async () => {
    const { accessToken: _, ...credentials } = CREDENTIALS;
    const client = new ApplianceCloud({ baseUrl: silentUrl, ...credentials, tokenProvider: () => Promise.reject(new Error('no tokens stored')) });
    const reason = new Error('the user left');
    await expect(client.getUser({ signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
  });
});

describe('a server shutting down, a proxy that drops the ETag, a token provider that fails', () => {
  let server: Server;
  let url: string;
  const seen: string[] = [];
  const envelope = (body: object) => JSON.stringify({ messageId: 'm', timestamp: 't', ...body });

  beforeAll(async () => {
    server = createServer((request, response) => {
      seen.push(`${request.method} ${request.url}`);
      // Each path's first request is refused as a draining server refuses it; the next is answered, without an ETag.
      if (seen.filter((line) => line === `${request.method} ${request.url}`).length === 1) {
        return void response.writeHead(503, { 'content-type': 'application/json' }).end(envelope({ error: { code: '2000', message: 'The server is shutting down: send the request again.' } }));
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(envelope({ response: { runState: { currentState: 'INITIAL' } } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => server.close());

  it('sends any request again after a 503 2000, which the server refuses before acting: a control too', async () => {
    const client = new ApplianceCloud({ baseUrl: url, ...CREDENTIALS });
    expect(await client.control('fan', {})).toEqual({ runState: { currentState: 'INITIAL' } });
    expect(seen.filter((line) => line === 'POST /devices/fan')).toHaveLength(2);
  });

  it('reads a status whose ETag a proxy dropped; only the versioned read needs it', async () => {
    const client = new ApplianceCloud({ baseUrl: url, ...CREDENTIALS });
    expect(await client.getStatus('washer')).toEqual({ runState: { currentState: 'INITIAL' } });
    const error = await client.getStatusWithVersion('washer').catch((e: unknown) => e);
    expect(isApplianceCloudError(error, 'BAD_RESPONSE')).toBe(true);
  });

  it('throws the token provider\'s failure as an ApplianceCloudError TOKEN carrying it, and sends nothing', async () => {
    const { accessToken: _, ...credentials } = CREDENTIALS;
    const cause = new Error('invalid_grant: the grant was revoked');
    const before = seen.length;
    const error = await new ApplianceCloud({ baseUrl: url, ...credentials, tokenProvider: () => Promise.reject(cause) }).getUser().catch((e: unknown) => e);
    expect(isApplianceCloudError(error, 'TOKEN')).toBe(true);
    expect(error).toMatchObject({ cause, message: expect.stringContaining('invalid_grant') });
    expect(seen.length).toBe(before);
  });
});

describe('redirects: the interface never answers 3xx (DESIGN A.3), so one is refused and not followed', () => {
  let elsewhere: Server;
  let front: Server;
  let frontUrl: string;
  let elsewhereUrl: string;
  const reachedElsewhere: { method: string; serviceKey: string | undefined }[] = [];

  beforeAll(async () => {
    // Another origin, answering every request with a status envelope.
    elsewhere = createServer((request, response) => {
      reachedElsewhere.push({ method: request.method!, serviceKey: request.headers['x-service-key'] as string | undefined });
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ messageId: 'm', timestamp: 't', response: { status: 'unchanged' } }));
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    elsewhereUrl = `http://localhost:${(elsewhere.address() as AddressInfo).port}`;
    // A front that redirects: to the other origin (an http → https redirect looks like this), or a POST to a GET of the same path.
    front = createServer((request, response) => {
      if (request.url === '/devices/away') return void response.writeHead(301, { location: `${elsewhereUrl}${request.url}` }).end('<h1>Moved</h1>');
      if (request.method === 'POST') return void response.writeHead(302, { location: request.url }).end();
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ messageId: 'm', timestamp: 't', response: { status: 'unchanged' } }));
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    frontUrl = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    elsewhere.close();
    front.close();
  });

  it('throws BAD_RESPONSE with the status and the Location, and sends the service key nowhere else', async () => {
    const error = await new ApplianceCloud({ baseUrl: frontUrl, ...CREDENTIALS }).control('away', {}).catch((e: unknown) => e);
    expect(isApplianceCloudError(error, 'BAD_RESPONSE')).toBe(true);
    expect(error).toMatchObject({ httpStatus: 301, message: expect.stringContaining(`${elsewhereUrl}/devices/away`) });
    expect(reachedElsewhere).toEqual([]);
  });

  it('never turns a control into a read of the status that looks like its success', async () => {
    const error = await new ApplianceCloud({ baseUrl: frontUrl, ...CREDENTIALS }).control('d', {}).catch((e: unknown) => e);
    expect(isApplianceCloudError(error, 'BAD_RESPONSE')).toBe(true);
    expect(error).toMatchObject({ httpStatus: 302 });
  });
});

describe('a base URL with a path (an API gateway mounting the interface under a prefix)', () => {
  let gateway: Server;
  let gatewayUrl: string;
  const paths: string[] = [];

  beforeAll(async () => {
    gateway = createServer((request, response) => {
      paths.push(request.url!);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ messageId: 'm', timestamp: 't', response: { userNumber: 'u' } }));
    });
    await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
    gatewayUrl = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
  });
  afterAll(() => gateway.close());

  it('keeps the path: the operations are {base_url}/users, … (DESIGN A.1), with or without a trailing slash', async () => {
    await new ApplianceCloud({ baseUrl: `${gatewayUrl}/thinq`, ...CREDENTIALS }).getUser();
    await new ApplianceCloud({ baseUrl: `${gatewayUrl}/thinq/`, ...CREDENTIALS }).subscribePush('d');
    await new ApplianceCloud({ baseUrl: gatewayUrl, ...CREDENTIALS }).getUser();
    expect(paths).toEqual(['/thinq/users', '/thinq/push/d', '/users']);
  });
});
