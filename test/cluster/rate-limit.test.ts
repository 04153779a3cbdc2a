/**
 * DESIGN J: a service's rate limit holds across the deployment, within 10 %. Two `serve` processes
 * on one PostgreSQL database; requests go to them in turn, as a round-robin load balancer sends
 * them, at six times the limit: the two accept together what one bucket gives — the burst plus the
 * rate over the run — not twice that, as nodes with a bucket each would. A node killed takes at most
 * its unspent batch with it: the survivor serves the whole limit at once.
 *
 * What one bucket gives is counted on the requests as the nodes decided them (each answer's envelope
 * timestamp; both nodes share this machine's clock): on a busy machine the requests do not reach
 * the nodes as evenly as they were sent, and a bucket full for a while takes no more.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newMessageId } from '../../src/ids.js';
import { createTestDatabase, postgresAdminUrl, postgresUnreachable, type TestDatabase } from '../helpers/postgres.js';
import { ok, startNode, type Node, type Partner } from './nodes.js';

const adminUrl = postgresAdminUrl();
const unreachable = await postgresUnreachable(adminUrl);
if (unreachable) console.warn(`Skipping the two-node rate-limit tests: ${unreachable}`);

const RATE = 20;
const BURST = 100;

interface Run {
  /** When the nodes answered each request (epoch ms, their clock), in order, and whether they accepted it. */
  decisions: { at: number; accepted: boolean }[];
  /** The rate-limit headers of the first 200. */
  firstHeaders: [string | null, string | null];
}

/**
 * GET /users at `perSecond` requests a second for `seconds`, request i through `nodes[i % length]`,
 * each sent on time whether the one before was answered or not.
 */
async function offer(nodes: Node[], who: Partner, perSecond: number, seconds: number): Promise<Run> {
  const headers = () => ({
    authorization: `Bearer ${who.accessToken}`,
    'x-country-code': who.countryCode,
    'x-message-id': newMessageId(),
    'x-service-id': who.serviceId,
    'x-service-key': who.serviceKey,
  });
  const run: Run = { decisions: [], firstHeaders: [null, null] };
  const others: string[] = [];
  const answers: Promise<void>[] = [];
  const start = performance.now();
  for (let i = 0; i < perSecond * seconds; i += 1) {
    const due = start + (i * 1000) / perSecond;
    if (due > performance.now()) await sleep(due - performance.now());
    answers.push(fetch(`${nodes[i % nodes.length]!.url}/users`, { headers: headers(), signal: AbortSignal.timeout(20_000) }).then(async (res) => {
      const { timestamp } = (await res.json()) as { timestamp: string };
      if (res.status !== 200 && res.status !== 429) others.push(String(res.status));
      if (res.status === 200 && !run.decisions.some((d) => d.accepted)) {
        run.firstHeaders = [res.headers.get('x-ratelimit-limit'), res.headers.get('x-ratelimit-remaining')];
      }
      // UTC without its zone (DESIGN A.3).
      run.decisions.push({ at: Date.parse(`${timestamp}Z`), accepted: res.status === 200 });
    }));
  }
  await Promise.all(answers);
  expect(others, 'answers other than 200 and 429').toEqual([]);
  run.decisions.sort((x, y) => x.at - y.at);
  return run;
}

/** How many of requests at `times` (ascending) one token bucket of this limit, full at first, accepts. */
function oneBucket(times: number[]): number {
  let tokens = BURST;
  let accepted = 0;
  for (let i = 0; i < times.length; i += 1) {
    if (i > 0) tokens = Math.min(BURST, tokens + ((times[i]! - times[i - 1]!) * RATE) / 1000);
    if (tokens >= 1) {
      tokens -= 1;
      accepted += 1;
    }
  }
  return accepted;
}

/** The nodes accepted, within 10 %, what one bucket accepts of the same requests; and they were over the limit. */
function expectOneBucket(run: Run): void {
  const accepted = run.decisions.filter((d) => d.accepted).length;
  const times = run.decisions.map((d) => d.at);
  const expected = oneBucket(times);
  const seconds = (times.at(-1)! - times[0]!) / 1000;
  const what = `${accepted} of ${times.length} accepted in ${seconds.toFixed(2)} s; one bucket accepts ${expected} (burst + rate × time: ${(BURST + RATE * seconds).toFixed(0)})`;
  expect(expected, what).toBeLessThan(times.length);
  expect(accepted, what).toBeGreaterThanOrEqual(0.9 * expected);
  expect(accepted, what).toBeLessThanOrEqual(1.1 * expected);
}

describe.skipIf(unreachable !== undefined)('a rate limit held across two nodes', () => {
  let db: TestDatabase;
  let a: Node | undefined;
  let b: Node | undefined;
  let partner: Partner;

  beforeAll(async () => {
    db = await createTestDatabase(adminUrl);
    const settings = { RATE_LIMIT_PER_SECOND: String(RATE), RATE_LIMIT_BURST: String(BURST) };
    [a, b] = await Promise.all([startNode('A', db.url, settings), startNode('B', db.url, settings)]);
    // Through the admin API only: no partner request spends a token before the runs.
    const service = ok(await a.admin('POST', '/services', { name: 'limited', allowedDevices: ['DEVICE_CEILING_FAN'] }), 'create service');
    const user = ok(await a.admin('POST', '/users', { countryCode: 'KR' }), 'create user');
    const token = ok(await a.admin('POST', `/users/${String(user.userNumber)}/tokens`, { serviceId: service.serviceId }), 'issue token');
    partner = { serviceId: String(service.serviceId), serviceKey: String(service.serviceKey), accessToken: String(token.accessToken), countryCode: 'KR' };
  });

  afterAll(async () => {
    await Promise.all([a, b].map((node) => (node?.alive() ? node.stop() : undefined)));
    await db?.drop();
  });

  it('accepts, over both nodes, what one bucket accepts: the burst plus the rate over the run, within 10 %', async () => {
    const run = await offer([a!, b!], partner, 6 * RATE, 4);
    expectOneBucket(run);
    // What is left is the answering node's estimate: its own stock, and the shared bucket as of its last lease.
    const [limit, remaining] = run.firstHeaders;
    expect([limit, Number(remaining) >= 0 && Number(remaining) <= BURST]).toEqual([String(BURST), true]);
  });

  it('gives the survivor of a killed node the whole limit at once', async () => {
    await a!.kill();
    // The bucket fills again, so that this run too starts with it full.
    await sleep((BURST / RATE) * 1000 + 100);
    expectOneBucket(await offer([b!], partner, 4 * RATE, 3));
  });
});
