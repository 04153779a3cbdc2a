/**
 * Issue 6, operations: PostgreSQL restarts under two running nodes. While it is down, requests
 * answer the 2000 envelope (they neither hang nor crash the process) and /ready says 503; once it is
 * back, both nodes serve again without a restart of their own, and every accepted message is delivered.
 * The server is a private one: the shared server on 5432 is never stopped.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, waitFor, type Receiver } from '../delivery/harness.js';
import { privatePostgresMissing, startPrivatePostgres, type PrivatePostgres } from '../helpers/private-postgres.js';
import { call, createClusterWorld, listMessages, reportBurst, startNode, type ClusterWorld, type Node } from './nodes.js';

const missing = privatePostgresMissing();
if (missing) console.warn(`Skipping the PostgreSQL restart test: ${missing}`);

const DEVICES = 4;
const REPORTS = 25;

describe.skipIf(missing !== undefined)('PostgreSQL restarted under two nodes', () => {
  let postgres: PrivatePostgres;
  let receiver: Receiver;
  let nodes: Node[] = [];
  let world: ClusterWorld;

  beforeAll(async () => {
    postgres = await startPrivatePostgres();
    // A receiver slower than the reports: deliveries are under way when the database goes.
    receiver = await startReceiver((response) => setTimeout(() => response.writeHead(200).end(), 20));
    // Short timeouts, so that an outage is reported quickly rather than waited out.
    const url = `${postgres.url}?connect_timeout=2&statement_timeout=5000`;
    nodes = await Promise.all([startNode('A', url), startNode('B', url)]);
    world = await createClusterWorld(nodes[0]!, receiver.url, DEVICES);
  });

  afterAll(async () => {
    for (const node of nodes) if (node.alive()) await node.kill();
    await receiver?.close();
    await postgres?.dispose();
  });

  /** Each device's reports through one node (half through each), so that each change is one message. */
  const burst = (offset: number) => Promise.all(world.deviceIds.map((deviceId, i) => reportBurst(nodes[i % nodes.length]!, deviceId, REPORTS, offset)));

  it('answers 2000 during the outage, recovers without a restart, and loses no accepted message', { timeout: 180_000 }, async () => {
    const during = burst(0);
    await waitFor('deliveries to be under way', () => (receiver.received.length >= 10 ? true : undefined), 30_000);
    // As a crash would: sessions are dropped, not closed.
    await postgres.stop('immediate');
    for (const node of nodes) {
      const report = await node.admin('POST', `/devices/${world.deviceIds[0]}/report`, { airFlow: { windStrength: 'LOW' } });
      expect([report.status, report.body.error?.code], node.output()).toEqual([500, '2000']);
      const devices = await node.partner(world.partner, 'GET', '/devices');
      expect([devices.status, devices.body.error?.code], node.output()).toEqual([500, '2000']);
      expect((await call(node.url, 'GET', '/ready', {})).status).toBe(503);
    }
    const before = await during;

    await postgres.start();
    for (const node of nodes) {
      await waitFor(`${node.name} to serve again`, async () => ((await node.partner(world.partner, 'GET', '/devices')).status === 200 ? true : undefined), 30_000);
      expect((await call(node.url, 'GET', '/ready', {})).status).toBe(200);
    }
    const after = await burst(1);
    expect(after.map((b) => b.accepted)).toEqual(world.deviceIds.map(() => REPORTS));

    const messages = await waitFor(
      'every message to be delivered',
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 250));
        const listed = await listMessages(nodes[1]!, world.partner.serviceId);
        return listed.every((m) => m.status === 'delivered') ? listed : undefined;
      },
      60_000,
    );
    // Every change an accepted report made has its message (a report answered 2000 may have made one more).
    world.deviceIds.forEach((deviceId, i) => {
      const changes = before[i]!.changes.size + after[i]!.changes.size;
      expect(messages.filter((m) => m.deviceId === deviceId).length, deviceId).toBeGreaterThanOrEqual(changes);
    });
    const arrived = new Set(receiver.delivered([world.webhookSecret]).map((d) => d.webhookId));
    expect(arrived).toEqual(new Set(messages.map((m) => m.messageId)));
    expect(nodes.map((node) => node.alive())).toEqual([true, true]);
    expect(await Promise.all(nodes.map((node) => node.stop()))).toEqual([0, 0]);
  });
});
