/**
 * DESIGN C and F across nodes: two `serve` processes share one outbox. Reports produced through both
 * are delivered exactly once in total and in order per device; when one node is killed mid-burst,
 * the other delivers every accepted message once the dead node's leases expire.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startReceiver, waitFor, type Delivered, type Receiver } from '../delivery/harness.js';
import { createTestDatabase, postgresAdminUrl, postgresUnreachable, type TestDatabase } from '../helpers/postgres.js';
import { createClusterWorld, listMessages, reportBurst, startNode, type ClusterWorld, type Node } from './nodes.js';

const adminUrl = postgresAdminUrl();
const unreachable = await postgresUnreachable(adminUrl);
if (unreachable) console.warn(`Skipping the two-node delivery tests: ${unreachable}`);

const DEVICES = 4;
const REPORTS = 25;

describe.skipIf(unreachable !== undefined)('delivery by two nodes on one database', () => {
  let db: TestDatabase;
  let receiver: Receiver;
  const nodes: Node[] = [];

  afterEach(async () => {
    for (const node of nodes.splice(0)) if (node.alive()) await node.kill();
    await receiver?.close();
    await db?.drop();
  });

  async function start(respond?: Parameters<typeof startReceiver>[0]): Promise<{ a: Node; b: Node; world: ClusterWorld }> {
    db = await createTestDatabase(adminUrl);
    receiver = await startReceiver(respond);
    const [a, b] = await Promise.all([startNode('A', db.url), startNode('B', db.url)]);
    nodes.push(a, b);
    return { a, b, world: await createClusterWorld(a, receiver.url, DEVICES) };
  }

  /** Every device's reports through both nodes at once, so that both nodes write to each device's sequence. */
  const burst = (through: Node[], world: ClusterWorld) =>
    Promise.all(through.flatMap((node, n) => world.deviceIds.map((deviceId) => reportBurst(node, deviceId, REPORTS, n))));

  /** Resolves once every message of the service is delivered, as node `via` lists them. */
  const allDelivered = (via: Node, world: ClusterWorld, timeoutMs = 60_000) =>
    waitFor(
      'every message to be delivered',
      async () => {
        // Not every 20 ms: each look lists up to 1000 messages.
        await new Promise((resolve) => setTimeout(resolve, 250));
        const messages = await listMessages(via, world.partner.serviceId);
        return messages.every((m) => m.status === 'delivered') ? messages : undefined;
      },
      timeoutMs,
    );

  it('delivers a burst produced through both nodes exactly once in total, in order per device', { timeout: 120_000 }, async () => {
    const { a, b, world } = await start();
    const accepted = (await burst([a, b], world)).reduce((sum, { accepted }) => sum + accepted, 0);
    expect(accepted).toBe(2 * DEVICES * REPORTS);

    const messages = await allDelivered(b, world);
    expect(messages.length).toBeGreaterThan(DEVICES * REPORTS);
    const arrivals = receiver.delivered([world.webhookSecret]);
    expect(arrivals.map((d) => d.webhookId).sort()).toEqual(messages.map((m) => m.messageId).sort());
    for (const deviceId of world.deviceIds) {
      const sequences = arrivals.filter((d) => deviceOf(d) === deviceId).map((d) => d.sequence);
      expect(sequences.length).toBeGreaterThan(0);
      expect(sequences).toEqual([...sequences].sort((x, y) => x - y));
    }

    expect(await Promise.all([a.stop(), b.stop()])).toEqual([0, 0]);
  });

  it('after one node is killed with SIGKILL mid-burst, the other delivers every accepted message', { timeout: 120_000 }, async () => {
    // A slow receiver: the node killed holds deliveries in flight.
    const { a, b, world } = await start((response) => setTimeout(() => response.writeHead(200).end(), 50));
    const producing = burst([a, b], world);
    await waitFor('deliveries to be under way', () => (receiver.received.length >= 20 ? true : undefined), 30_000);
    await a.kill();
    await producing;

    // The dead node's leases expire (7 s with a 1 s attempt timeout); B sends what A held, and the rest.
    const messages = await allDelivered(b, world, 90_000);
    const arrivals = receiver.delivered([world.webhookSecret]);
    expect(new Set(arrivals.map((d) => d.webhookId))).toEqual(new Set(messages.map((m) => m.messageId)));
    // A duplicate is the message A sent just before dying: the same webhook-id, the same body.
    const bodies = new Map<string, Set<string>>();
    for (const d of arrivals) bodies.set(d.webhookId, (bodies.get(d.webhookId) ?? new Set()).add(JSON.stringify(d.body)));
    expect([...bodies.values()].every((set) => set.size === 1)).toBe(true);
    for (const deviceId of world.deviceIds) {
      const firstArrivals = arrivals.filter((d, i) => deviceOf(d) === deviceId && arrivals.findIndex((e) => e.webhookId === d.webhookId) === i);
      const sequences = firstArrivals.map((d) => d.sequence);
      expect(sequences).toEqual([...sequences].sort((x, y) => x - y));
    }

    expect(await b.stop()).toBe(0);
  });
});

function deviceOf(delivered: Delivered): string {
  return String(delivered.payload.deviceId);
}
