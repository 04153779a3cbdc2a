/**
 * The dispatcher loop on an injected clock: a real store, a real sender and loopback receivers, with
 * time advanced by hand so that retry times and lease expiry are exact rather than waited for.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Dispatcher, type DispatcherIo, type DispatcherSettings } from '../../src/delivery/dispatcher.js';
import { createSender, type Sender } from '../../src/delivery/sender.js';
import { newWebhookSecret } from '../../src/delivery/sign.js';
import type { Clock } from '../../src/ids.js';
import type { RecordedStatus } from '../../src/store/areas/delivery.js';
import type { Store } from '../../src/store/store.js';
import { testStore } from '../helpers/app.js';
import { addDevice, addUser, connect, T0 } from '../store/contract/world.js';
import { startReceiver, waitFor, type Receiver, type Respond } from './harness.js';

const SETTINGS: Omit<DispatcherSettings, 'owner'> = {
  schedule: [5_000, 300_000],
  leaseMs: 30_000,
  batchSize: 10,
  maxInFlight: 10,
  perEndpointLimit: 4,
  pollMs: 20,
  claimIntervalMs: 1,
};

describe('dispatcher', () => {
  let store: Store;
  let closeStore: () => Promise<void>;
  let sender: Sender;
  let now: number;
  const clock: Clock = { now: () => now };
  const dispatchers: Dispatcher[] = [];
  const receivers: Receiver[] = [];
  const recorded: [string, RecordedStatus][] = [];

  beforeEach(async () => {
    now = T0;
    ({ store, close: closeStore } = await testStore());
    sender = createSender({ phase: 'QA', allowList: [], timeoutMs: 5_000, clock });
    await store.createService(
      { serviceId: 'S1', name: 'S1', keyHash: 'h', allowedDevices: ['DEVICE_WASHER'], callbackUrl: null, eventCallbackUrl: null, webhookSecret: newWebhookSecret() },
      T0,
    );
    await addUser(store, 'U1');
    // Registered before the service listens: each test's rename is the only message.
    await addDevice(store, 'D1', 'U1');
    await connect(store, 'S1', 'U1');
  });
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
    await Promise.all(dispatchers.splice(0).map((d) => d.stop()));
    await sender.close();
    await closeStore();
    recorded.length = 0;
  });

  /** Records as the server does: with the claim along when the dispatcher asks for one. */
  const storeRecord: DispatcherIo['record'] = async (attempts, at, next) =>
    next ? store.recordAndClaim(attempts, at, 5 * 86_400_000, next) : { statuses: await store.recordAttempts(attempts, at, 5 * 86_400_000), claimed: [] };

  function dispatcher(owner: string, settings: Partial<DispatcherSettings> = {}): Dispatcher {
    const started = new Dispatcher(
      {
        claim: (request) => store.claimDeliveries(request),
        record: storeRecord,
        send: (url, headers, body) => sender.send(url, headers, body),
        clock,
        random: () => 0.5,
      },
      { owner, ...SETTINGS, ...settings },
      { recorded: (record, status) => recorded.push([record.messageId, status]) },
    );
    dispatchers.push(started);
    started.start();
    return started;
  }

  async function receiver(respond: Respond): Promise<Receiver> {
    const started = await startReceiver(respond);
    receivers.push(started);
    await store.updateService('S1', { callbackUrl: started.url });
    return started;
  }

  const message = async () => (await store.listMessages('S1', {}))[0]!;

  /** A dispatcher of node-a whose first record batch waits until `open()`; counts the record batches begun and the answers received. */
  function gatedDispatcher(): { loop: Dispatcher; open: () => void; counts: { recordsBegun: number; answered: number } } {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const counts = { recordsBegun: 0, answered: 0 };
    const loop = new Dispatcher(
      {
        claim: (request) => store.claimDeliveries(request),
        record: async (attempts, at, next) => {
          counts.recordsBegun += 1;
          if (counts.recordsBegun === 1) await gate;
          return storeRecord(attempts, at, next);
        },
        send: async (url, headers, body) => {
          const outcome = await sender.send(url, headers, body);
          counts.answered += 1;
          return outcome;
        },
        clock,
        random: () => 0.5,
      },
      { owner: 'node-a', ...SETTINGS },
      { recorded: (record, status) => recorded.push([record.messageId, status]) },
    );
    dispatchers.push(loop);
    return { loop, open, counts };
  }

  it('retries when the schedule says, on the injected clock, at least as late as Retry-After asks', async () => {
    const hooks = await receiver((response, count) => (count === 1 ? response.writeHead(503, { 'retry-after': '120' }).end() : response.writeHead(200).end()));
    const loop = dispatcher('node-a');
    await store.renameDevice('D1', 'Renamed', T0);
    await waitFor('the first attempt', async () => ((await message()).attempts === 1 ? true : undefined));

    const [first] = await store.listAttempts([(await message()).messageId]);
    const due = first!.startedAt + first!.durationMs + 120_000;
    expect(await message()).toMatchObject({ status: 'pending', nextAttemptAt: due });

    now = due - 1;
    loop.wake();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(hooks.received).toHaveLength(1);

    now = due;
    loop.wake();
    await waitFor('the retry', async () => ((await message()).status === 'delivered' ? true : undefined));
    const ids = hooks.received.map((r) => r.headers['webhook-id']);
    expect(ids).toEqual([ids[0], ids[0]]);
    // Each attempt is signed at its own time.
    expect(hooks.received.map((r) => r.headers['webhook-timestamp'])).toEqual([String(Math.floor(T0 / 1000)), String(Math.floor(due / 1000))]);
  });

  it('lets a new holder take over an expired lease, and ignores the late finisher', async () => {
    let answer: (() => void) | undefined;
    const hooks = await receiver((response, count) => {
      if (count === 1) answer = () => response.writeHead(200).end();
      else response.writeHead(200).end();
    });
    // node-a claims once, when woken, and then only waits: a claim of its own in flight while the
    // clock jumps would lease with the time it was asked at, a lease already expired at the new time,
    // and node-b would take that one back too (a third attempt, fenced, on PostgreSQL, where a claim
    // is two statements that another node's claim can come between).
    const slow = dispatcher('node-a', { pollMs: 3_600_000 });
    await store.renameDevice('D1', 'Renamed', T0);
    slow.wake();
    await waitFor('the first attempt to hang', () => answer);

    // node-a stalls past its lease; node-b takes it back and delivers.
    // Waited for as reported, not as stored: on PostgreSQL others see a commit before its node hears of it.
    now = T0 + SETTINGS.leaseMs;
    dispatcher('node-b');
    await waitFor('the new holder to deliver', () => (recorded.length > 0 ? true : undefined));
    answer!();
    await slow.stop();

    const { messageId } = await message();
    expect(recorded).toEqual([[messageId, 'delivered'], [messageId, 'fenced']]);
    expect(hooks.received.map((r) => r.headers['webhook-id'])).toEqual([messageId, messageId]);
    expect(await store.listAttempts([messageId])).toHaveLength(1);
  });

  it('while more attempts are out than outcomes wait, records an outcome with the next ones rather than alone', async () => {
    const hooks = await receiver((response, count) => setTimeout(() => response.writeHead(200).end(), count === 1 ? 0 : 30));
    for (const deviceId of ['D2', 'D3', 'D4']) await addDevice(store, deviceId, 'U1');
    const batches: number[] = [];
    const loop = new Dispatcher(
      {
        claim: (request) => store.claimDeliveries(request),
        record: async (attempts, at, next) => {
          batches.push(attempts.length);
          return storeRecord(attempts, at, next);
        },
        send: (url, headers, body) => sender.send(url, headers, body),
        clock,
        random: () => 0.5,
      },
      // Long enough that only the other outcomes, never the wait running out, release the first.
      { owner: 'node-a', ...SETTINGS, recordGatherMs: 60_000 },
    );
    dispatchers.push(loop);
    for (const deviceId of ['D1', 'D2', 'D3', 'D4']) await store.renameDevice(deviceId, 'Renamed', T0);
    loop.start();
    await waitFor('every message delivered', async () => ((await store.listMessages('S1', {})).every((m) => m.status === 'delivered') ? true : undefined));
    expect(hooks.received.length).toBeGreaterThanOrEqual(4);
    // The first answer came 30 ms before the others, and waited for them.
    expect(batches[0]).toBeGreaterThanOrEqual(2);
  });

  it('reports a claim that failed after its outcomes were recorded, and counts those outcomes and sends what they leased', async () => {
    const hooks = await receiver((response) => response.writeHead(200).end());
    const failures: [string, string][] = [];
    let first = true;
    const loop = new Dispatcher(
      {
        claim: (request) => store.claimDeliveries(request),
        // As PostgreSQL answers when the claim after the outcomes fails: the outcomes stand, with what they leased.
        record: async (attempts, at, next) => {
          const recorded = await storeRecord(attempts, at, next);
          if (!next || !first) return recorded;
          first = false;
          return { ...recorded, claimFailed: new Error('claim refused') };
        },
        send: (url, headers, body) => sender.send(url, headers, body),
        clock,
        random: () => 0.5,
      },
      { owner: 'node-a', ...SETTINGS },
      { recorded: (record, status) => recorded.push([record.messageId, status]), failed: (error, during) => failures.push([String(error), during]) },
    );
    dispatchers.push(loop);
    loop.start();
    await store.renameDevice('D1', 'First', T0);
    await store.renameDevice('D1', 'Second', T0);
    // The dispatcher's events come after the commit the store shows: waited for, not the rows.
    await waitFor('both recorded', () => (recorded.length === 2 ? true : undefined));
    expect((await store.listMessages('S1', {})).map((m) => m.status)).toEqual(['delivered', 'delivered']);
    expect(failures).toEqual([['Error: claim refused', 'claim']]);
    expect(recorded.map(([, status]) => status)).toEqual(['delivered', 'delivered']);
    expect(hooks.received).toHaveLength(2);
  });

  it('stops only after a record batch in flight, and what it claimed along, are delivered and recorded', async () => {
    const hooks = await receiver((response) => response.writeHead(200).end());
    const { loop, open, counts } = gatedDispatcher();
    loop.start();
    await store.renameDevice('D1', 'First', T0);
    await store.renameDevice('D1', 'Second', T0);
    await waitFor('the first record batch', () => (counts.recordsBegun === 1 ? true : undefined));

    const stopped = loop.stop();
    open();
    await stopped;
    const messages = await store.listMessages('S1', {});
    expect(messages.map((m) => m.status)).toEqual(['delivered', 'delivered']);
    expect(hooks.received).toHaveLength(2);
    expect(recorded.map(([, status]) => status)).toEqual(['delivered', 'delivered']);
  });

  it('stops only after recording an outcome that arrived while the batch before it was being recorded', async () => {
    let answerD2: (() => void) | undefined;
    const hooks: Receiver = await receiver((response, count) => {
      if (hooks.received[count - 1]!.body.includes('"D2"')) answerD2 = () => response.writeHead(200).end();
      else response.writeHead(200).end();
    });
    await addDevice(store, 'D2', 'U1');
    const { loop, open, counts } = gatedDispatcher();
    // Two messages in two queues, out at once: D2's registration and D1's rename.
    await store.renameDevice('D1', 'First', T0);
    loop.start();
    await waitFor('D1 recorded, D2 out', () => (counts.recordsBegun === 1 && answerD2 ? true : undefined));

    // The drain waits for the first batch; meanwhile D2's outcome arrives and is chained behind it.
    const stopped = loop.stop();
    answerD2!();
    await waitFor('D2 answered', () => (counts.answered === 2 ? true : undefined));
    await new Promise((resolve) => setImmediate(resolve));
    open();
    await stopped;
    expect(hooks.received).toHaveLength(2);
    expect(recorded.map(([, status]) => status)).toEqual(['delivered', 'delivered']);
    expect((await store.listMessages('S1', {})).map((m) => m.status)).toEqual(['delivered', 'delivered']);
  });
});
