/**
 * Endpoint health and isolation on the wire (DESIGN C): 410 disables and holds, enabling releases in
 * order, a hanging endpoint delays no other service, phase OP refuses internal addresses.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Settings } from '../../src/config.js';
import type { DeliveryLog, DeliveryTuning } from '../../src/delivery/index.js';
import { USER_AGENT } from '../../src/delivery/sender.js';
import { callAdmin, createWorld, type World } from '../helpers/app.js';
import { deliveryApp, secretsOf, setCallbacks, settled, startReceiver, waitFor, type DeliveryApp, type Receiver, type Respond } from './harness.js';
import { startTcpServer } from './loopback.js';

describe('delivery endpoints (DESIGN C)', () => {
  let t: DeliveryApp | undefined;
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    // Receivers first: closing them ends any attempt still hanging, so the dispatcher drains at once.
    await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
    await t?.close();
    t = undefined;
  });

  async function app(settings: Settings = {}, tuning: Partial<DeliveryTuning> = {}, log?: DeliveryLog): Promise<DeliveryApp> {
    t = await deliveryApp(settings, tuning, log);
    return t;
  }
  async function receiver(respond?: Respond): Promise<Receiver> {
    const started = await startReceiver(respond);
    cleanups.push(() => started.close());
    return started;
  }
  const admin = (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown) => callAdmin(t!.app, method, url, body);
  const statuses = async (world: World) => (await t!.ctx.store.listMessages(world.serviceId, {})).reverse().map((m) => m.status);

  /** A world whose partner loaded its device list: each rename of a device is one message to the service. */
  async function listening(deviceTypes: string[]): Promise<World> {
    const world = await createWorld(t!.ctx, { deviceTypes });
    await t!.app.inject({ method: 'GET', url: '/devices', headers: world.headers() });
    return world;
  }
  const rename = (deviceId: string, alias: string) => admin('PATCH', `/admin/devices/${deviceId}`, { alias });

  it('410 Gone disables the endpoint and holds its messages; enabling it sends them all, in order', async () => {
    await app();
    const world = await listening(['DEVICE_WASHER', 'DEVICE_DRYER']);
    const [washer, dryer] = world.devices.map((d) => d.deviceId) as [string, string];
    let gone = true;
    const hooks = await receiver((response) => response.writeHead(gone ? 410 : 200).end());
    await setCallbacks(t!, world.serviceId, { callbackUrl: hooks.url });

    await rename(washer, 'W1');
    await waitFor('the 410 to hold the message', async () => ((await statuses(world))[0] === 'held' ? true : undefined));
    expect(await t!.ctx.store.getEndpointHealth(world.serviceId)).toMatchObject({ disabledReason: 'gone' });
    await rename(washer, 'W2');
    await rename(dryer, 'D1');
    await waitFor('every message to be held', async () => ((await statuses(world)).every((s) => s === 'held') ? true : undefined));
    expect(hooks.received).toHaveLength(1);

    gone = false;
    const enabled = await admin('PATCH', `/admin/services/${world.serviceId}`, { enabled: true });
    expect(enabled.statusCode).toBe(200);
    await settled(t!.ctx.store, world.serviceId);
    const delivered = hooks.delivered(await secretsOf(t!.ctx.store, world.serviceId));
    const first = delivered[0]!;
    const after = delivered.slice(1);
    expect(after.filter((d) => d.payload.deviceId === washer).map((d) => d.payload.alias)).toEqual(['W1', 'W2']);
    expect(after.map((d) => d.payload.alias).sort()).toEqual(['D1', 'W1', 'W2']);
    // The message that got the 410 went again under the same webhook-id.
    expect(after.find((d) => d.payload.alias === 'W1')?.webhookId).toBe(first.webhookId);
    expect(await statuses(world)).toEqual(['delivered', 'delivered', 'delivered']);
  });

  it('a 410 from the callback URL the service moved away from while the attempt was out disables nothing: the message goes to the new one', async () => {
    await app();
    const world = await listening(['DEVICE_WASHER']);
    let answerOld: (() => void) | undefined;
    const old = await receiver((response) => (answerOld = () => response.writeHead(410).end()));
    const moved = await receiver();
    await setCallbacks(t!, world.serviceId, { callbackUrl: old.url });

    await rename(world.devices[0]!.deviceId, 'Moving');
    await waitFor('the attempt at the old URL', () => answerOld);
    // The partner moves its endpoint, and retires the old one with 410 Gone.
    await setCallbacks(t!, world.serviceId, { callbackUrl: moved.url });
    answerOld!();

    await settled(t!.ctx.store, world.serviceId);
    expect(await statuses(world)).toEqual(['delivered']);
    expect(moved.delivered(await secretsOf(t!.ctx.store, world.serviceId)).map((d) => d.payload.alias)).toEqual(['Moving']);
    expect(await t!.ctx.store.getEndpointHealth(world.serviceId)).toMatchObject({ disabledAt: null, disabledReason: null });
  });

  it('holds the messages of a service without a callback URL, and sends them once it has one', async () => {
    await app();
    const world = await listening(['DEVICE_WASHER']);
    await rename(world.devices[0]!.deviceId, 'Waiting');
    await waitFor('the message to be held', async () => ((await statuses(world))[0] === 'held' ? true : undefined));
    const hooks = await receiver();
    await setCallbacks(t!, world.serviceId, { callbackUrl: hooks.url });
    await settled(t!.ctx.store, world.serviceId);
    expect(hooks.delivered(await secretsOf(t!.ctx.store, world.serviceId)).map((d) => d.payload.alias)).toEqual(['Waiting']);
  });

  it('a hanging endpoint does not delay another service', async () => {
    await app({}, { perEndpointLimit: 2 });
    const hanging = await listening(['DEVICE_WASHER', 'DEVICE_DRYER', 'DEVICE_STYLER', 'DEVICE_OVEN']);
    const healthy = await listening(['DEVICE_WASHER', 'DEVICE_DRYER']);
    const stuck = await receiver(() => undefined);
    const hooks = await receiver();
    await setCallbacks(t!, hanging.serviceId, { callbackUrl: stuck.url });
    await setCallbacks(t!, healthy.serviceId, { callbackUrl: hooks.url });

    for (const device of hanging.devices) await rename(device.deviceId, 'Stuck');
    await waitFor('the hanging endpoint to hold its slots', () => (stuck.received.length === 2 ? true : undefined));
    for (let i = 0; i < 5; i++) for (const device of healthy.devices) await rename(device.deviceId, `Healthy ${i}`);

    await settled(t!.ctx.store, healthy.serviceId);
    expect(hooks.delivered(await secretsOf(t!.ctx.store, healthy.serviceId))).toHaveLength(10);
    // Meanwhile the hanging service has two attempts in flight and two messages waiting, unanswered.
    expect(stuck.received).toHaveLength(2);
    expect((await statuses(hanging)).sort()).toEqual(['delivering', 'delivering', 'pending', 'pending']);
  });

  it('endpoints that hang and together hold every slot of the process do not delay another service', async () => {
    // Two hanging services at their limit of 2 fill the 4 slots; their attempts outlast the test.
    await app({ DELIVERY_ATTEMPT_TIMEOUT_MS: '60000' }, { perEndpointLimit: 2, maxInFlight: 4 });
    const hanging = [await listening(['DEVICE_WASHER', 'DEVICE_DRYER']), await listening(['DEVICE_WASHER', 'DEVICE_DRYER'])];
    const healthy = await listening(['DEVICE_WASHER', 'DEVICE_DRYER']);
    const stuck = await receiver(() => undefined);
    const hooks = await receiver();
    for (const world of hanging) await setCallbacks(t!, world.serviceId, { callbackUrl: stuck.url });
    await setCallbacks(t!, healthy.serviceId, { callbackUrl: hooks.url });

    for (const world of hanging) for (const device of world.devices) await rename(device.deviceId, 'Stuck');
    await waitFor('the hanging endpoints to hold every slot', () => (stuck.received.length === 4 ? true : undefined));
    for (let i = 0; i < 3; i++) for (const device of healthy.devices) await rename(device.deviceId, `Healthy ${i}`);

    await waitFor('the healthy service to be delivered while the others still hang', async () => {
      const open = (await t!.ctx.store.listMessages(healthy.serviceId, {})).filter((m) => m.status !== 'delivered');
      return open.length === 0 ? true : undefined;
    }, 5_000);
    expect(hooks.delivered(await secretsOf(t!.ctx.store, healthy.serviceId))).toHaveLength(6);
    expect(stuck.received).toHaveLength(4);
  });

  it('endpoints that hang and hold every slot do not delay another service on the same host either', async () => {
    await app({ DELIVERY_ATTEMPT_TIMEOUT_MS: '60000' }, { perEndpointLimit: 2, maxInFlight: 4 });
    const hanging = [await listening(['DEVICE_WASHER', 'DEVICE_DRYER']), await listening(['DEVICE_WASHER', 'DEVICE_DRYER'])];
    const healthy = await listening(['DEVICE_WASHER']);
    // One host for all three services: its first four requests (the hanging services') get no answer.
    const shared = await receiver((response, count) => (count > 4 ? response.writeHead(200).end() : undefined));
    for (const world of [...hanging, healthy]) await setCallbacks(t!, world.serviceId, { callbackUrl: shared.url });

    for (const world of hanging) for (const device of world.devices) await rename(device.deviceId, 'Stuck');
    await waitFor('the hanging services to hold every slot', () => (shared.received.length === 4 ? true : undefined));
    await rename(healthy.devices[0]!.deviceId, 'Healthy');

    await waitFor('the healthy service to be delivered while the others still hang', async () => {
      const [message] = await t!.ctx.store.listMessages(healthy.serviceId, {});
      return message?.status === 'delivered' ? true : undefined;
    }, 5_000);
  });

  it('in phase OP refuses http, and loopback addresses at connect time, without ever connecting', async () => {
    await app({ PHASE: 'OP' }, {});
    const listener = await startTcpServer();
    cleanups.push(() => listener.close());
    const plain = await listening(['DEVICE_WASHER']);
    const byName = await listening(['DEVICE_WASHER']);
    // The admin API refuses such a URL when it is set; one stored before that check still never gets a connection.
    await t!.ctx.store.updateService(plain.serviceId, { callbackUrl: `http://127.0.0.1:${listener.port}/hook` });
    await t!.ctx.store.updateService(byName.serviceId, { callbackUrl: `https://localhost:${listener.port}/hook` });
    await rename(plain.devices[0]!.deviceId, 'Plain');
    await rename(byName.devices[0]!.deviceId, 'By name');

    for (const [world, refusal] of [
      [plain, /^phase OP accepts only https: callback URLs$/],
      [byName, /^callback host localhost resolves to .*\(loopback\), refused in phase OP$/],
    ] as const) {
      await settled(t!.ctx.store, world.serviceId);
      const [message] = (await admin('GET', `/admin/services/${world.serviceId}/messages`)).json().response;
      expect(message.status).toBe('failed');
      expect(message.attempts).toHaveLength(3);
      for (const attempt of message.attempts) expect(attempt).toMatchObject({ responseStatus: null, error: expect.stringMatching(refusal) });
    }
    expect(listener.connections()).toBe(0);
  });

  it('counts deliveries by outcome and service, attempt latency, and what is pending; warns of each failed attempt', async () => {
    const warnings: [object, string][] = [];
    await app({}, {}, { warn: (details, message) => warnings.push([details, message]), error: () => undefined });
    const world = await listening(['DEVICE_WASHER']);
    const hooks = await receiver((response, count) => response.writeHead(count === 1 ? 500 : 200).end());
    await setCallbacks(t!, world.serviceId, { callbackUrl: hooks.url });
    await rename(world.devices[0]!.deviceId, 'Counted');
    await settled(t!.ctx.store, world.serviceId);
    // Outcomes are counted once their record returns, which is after its commit and the claim that follows it.
    const delivered = `deliveries_total{outcome="delivered",service="${world.serviceId}"} 1`;
    const text = await waitFor('the delivery to be counted', async () => ((await t!.registry.metrics()).includes(delivered) ? t!.registry.metrics() : undefined));

    const [message] = await t!.ctx.store.listMessages(world.serviceId, {});
    expect(warnings).toEqual([[
      { serviceId: world.serviceId, messageId: message!.messageId, responseStatus: 500, error: null, nextAttemptAt: expect.stringMatching(/^\d{4}-.*Z$/) },
      expect.stringMatching(/^delivery attempt failed \(HTTP 500\); next attempt at \d{4}-.*Z$/),
    ]]);
    expect(hooks.received.map((request) => request.headers['user-agent'])).toEqual([USER_AGENT, USER_AGENT]);
    expect(USER_AGENT).toMatch(/^appliance-cloud\/\d+\.\d+\.\d+/);

    expect(text).toContain(`deliveries_total{outcome="retry",service="${world.serviceId}"} 1`);
    expect(text).toContain(delivered);
    expect(text).toMatch(/^delivery_attempt_duration_seconds_count\{result="success"\} 1$/m);
    expect(text).toMatch(/^delivery_attempt_duration_seconds_count\{result="failure"\} 1$/m);
    expect(text).toMatch(/^deliveries_pending 0$/m);
    expect(text).toMatch(/^deliveries_oldest_pending_age_seconds 0$/m);
  });

  it('sweeps expired event subscriptions', async () => {
    await app();
    const world = await listening(['DEVICE_WASHER']);
    const deviceId = world.devices[0]!.deviceId;
    const now = Date.now();
    const subscription = { serviceId: world.serviceId, userNumber: world.userNumber, deviceId, expiresAt: now + 50 };
    expect(await t!.ctx.store.upsertEventSubscription(subscription, now, 100)).toBe('created');
    // Once swept, subscribing again creates rather than renews.
    await waitFor('the sweeper', async () => {
      await new Promise((resolve) => setTimeout(resolve, 150));
      return (await t!.ctx.store.upsertEventSubscription(subscription, Date.now(), 100)) === 'created' ? true : undefined;
    });
  });

  it('drains on stop: finishes the attempt in flight, records it, and claims nothing more', async () => {
    await app();
    const world = await listening(['DEVICE_WASHER']);
    const hooks = await receiver((response) => setTimeout(() => response.writeHead(200).end(), 300));
    await setCallbacks(t!, world.serviceId, { callbackUrl: hooks.url });
    await rename(world.devices[0]!.deviceId, 'In flight');
    await waitFor('the attempt to start', () => (hooks.received.length === 1 ? true : undefined));

    await t!.delivery.stop();
    expect(await statuses(world)).toEqual(['delivered']);
    await rename(world.devices[0]!.deviceId, 'After the drain');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await statuses(world)).toEqual(['delivered', 'pending']);
    expect(hooks.received).toHaveLength(1);
  });
});
