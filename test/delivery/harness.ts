/**
 * Delivery tests' world: the app with the dispatcher running on it, real loopback receivers that
 * verify every request with the public `standardwebhooks` package, and waiting with a deadline.
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { Registry } from 'prom-client';
import { Webhook } from 'standardwebhooks';
import type { Settings } from '../../src/config.js';
import { startDelivery, type Delivery, type DeliveryLog, type DeliveryTuning } from '../../src/delivery/index.js';
import type { Store } from '../../src/store/store.js';
import { callAdmin, testApp, type TestApp } from '../helpers/app.js';
import { startHttpServer, type LoopbackServer, type Received } from './loopback.js';

export interface DeliveryApp extends TestApp {
  delivery: Delivery;
  registry: Registry;
}

/** The test app and its dispatcher: a short retry schedule, polls and sweeps quick enough for tests. */
export async function deliveryApp(settings: Settings = {}, tuning: Partial<DeliveryTuning> = {}, log?: DeliveryLog): Promise<DeliveryApp> {
  const t = await testApp({ settings: { DELIVERY_RETRY_SCHEDULE: '50ms,100ms', ...settings } });
  const registry = new Registry();
  const delivery = await startDelivery({
    store: t.ctx.store,
    clock: t.ctx.clock,
    config: t.ctx.config,
    registry,
    ...(log ? { log } : {}),
    tuning: { pollMs: 100, sweepMs: 100, ...tuning },
  });
  return {
    ...t,
    delivery,
    registry,
    async close() {
      await delivery.stop();
      await t.close();
    },
  };
}

/** A delivered request as the partner reads it. */
export interface Delivered {
  webhookId: string;
  sequence: number;
  body: { messageId: string; push?: Record<string, unknown>; event?: Record<string, unknown> };
  payload: Record<string, unknown>;
}

/** A receiver answering `respond` (200 by default); `delivered()` parses each request received so far, verified. */
export interface Receiver extends LoopbackServer {
  /** Throws for a request that none of `secrets` verifies. */
  delivered(secrets: readonly string[]): Delivered[];
}

export type Respond = (response: ServerResponse, count: number) => void;

export async function startReceiver(respond: Respond = (response) => response.writeHead(200).end()): Promise<Receiver> {
  let count = 0;
  const server = await startHttpServer((_request, response) => respond(response, ++count));
  return {
    ...server,
    delivered: (secrets) => {
      const verifiers = secrets.map((secret) => new Webhook(secret));
      return server.received.map((request) => parse(request, verifiers));
    },
  };
}

/** Throws unless one of the secrets verifies the request, as a partner's receiver would. */
function parse(request: Received, verifiers: Webhook[]): Delivered {
  const headers = flat(request.headers);
  if (!verifiers.some((verifier) => verifies(verifier, request.body, headers))) {
    throw new Error(`request ${headers['webhook-id']} does not verify with the service's secrets`);
  }
  const body = JSON.parse(request.body) as Delivered['body'];
  const payload = body.push ?? body.event;
  if (!payload) throw new Error(`request ${headers['webhook-id']} has neither push nor event`);
  return { webhookId: headers['webhook-id'] ?? '', sequence: Number(headers['webhook-sequence']), body, payload };
}

function verifies(verifier: Webhook, body: string, headers: Record<string, string>): boolean {
  try {
    verifier.verify(body, headers);
    return true;
  } catch {
    return false;
  }
}

function flat(headers: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : (value ?? '')]));
}

/** The service's current webhook secrets. */
export async function secretsOf(store: Store, serviceId: string): Promise<string[]> {
  const service = await store.getService(serviceId);
  if (!service) throw new Error(`no service ${serviceId}`);
  return service.webhookSecrets.map((s) => s.secret);
}

/** Points the service's callbacks at receivers through the admin API. */
export async function setCallbacks(t: TestApp, serviceId: string, urls: { callbackUrl?: string | null; eventCallbackUrl?: string | null }): Promise<void> {
  const res = await callAdmin(t.app, 'PATCH', `/admin/services/${serviceId}`, urls);
  if (res.statusCode !== 200) throw new Error(`PATCH service: ${res.body}`);
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Resolves once none of the service's messages is pending or delivering. */
export async function settled(store: Store, serviceId: string): Promise<void> {
  await waitFor(`service ${serviceId} to settle`, async () => {
    const open = (await store.listMessages(serviceId, { limit: 1000 })).filter((m) => m.status === 'pending' || m.status === 'delivering');
    return open.length === 0 ? true : undefined;
  });
}
