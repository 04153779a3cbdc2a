/**
 * One chaos setup from start to figures: the infrastructure (a SQLite file and the embedded broker,
 * or a private PostgreSQL and a private Mosquitto), the `serve` nodes, the world and the load; then
 * SIGKILL of a node every few seconds (on PostgreSQL never the last node up, and the database
 * restarted once mid-run); then the load stops, every node is up, the outbox drains, and every
 * accepted report is looked for among the deliveries.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { formatTimestamp } from '../../src/ids.js';
import { call, ok } from '../../test/cluster/nodes.js';
import { freePort } from '../../test/helpers/ports.js';
import { startPrivatePostgres, type PrivatePostgres } from '../../test/helpers/private-postgres.js';
import { account, changesOf, type Accepted, type Accounting } from './accounting.js';
import type { Cleanup } from './cleanup.js';
import { ChaosDevice } from './device.js';
import { Load, type FuzzFigures, type LoadSettings } from './load.js';
import { loggedProblems, ServeNode, startMosquitto, type LoggedProblem } from './processes.js';
import { startReceiver } from './receiver.js';
import { ADMIN_TOKEN, createWorld, type ChaosWorld } from './world.js';

export const SETUPS = ['sqlite', 'postgres'] as const;
export type SetupName = (typeof SETUPS)[number];

export interface ChaosSettings extends LoadSettings {
  durationS: number;
  killIntervalS: number;
  /** Ends the load once this many kills were survived, if before `durationS`; 0 for no limit. */
  kills: number;
  devices: number;
  receiverFailureRate: number;
  drainTimeoutS: number;
  /** The compiled CLI: `node <entry> serve`. */
  entry: string;
}

/** Every node: phase QA (a loopback receiver is allowed), quick retries and leases, no rate limit, warnings only. */
const NODE_SETTINGS = {
  ADMIN_TOKEN,
  PHASE: 'QA',
  LOG_LEVEL: 'warn',
  RATE_LIMIT_PER_SECOND: '0',
  DELIVERY_RETRY_SCHEDULE: Array.from({ length: 50 }, () => '250ms').join(','),
  // The lease is 2 × this + 5 s: what a killed node was sending goes again 7 s later.
  DELIVERY_ATTEMPT_TIMEOUT_MS: '1000',
  CONTROL_TIMEOUT_MS: '2000',
};

/** How long in-flight reports may take to be answered once the load stops. */
const STOP_GRACE_MS = 15_000;
/** Lost reports examined one by one in the outbox. */
const LOST_EXAMINED = 20;

export interface ChaosEvent {
  /** Seconds since the load started. */
  at: number;
  what: string;
}

/** A lost report, as the outbox and the run's events explain it. */
export interface LostReport extends Accepted {
  /** The status of the outbox message carrying it, or `absent`: then it was never committed. */
  outbox: string;
  /** The kill or restart nearest to when it was sent. */
  nearest: string;
}

export interface SetupResult extends Omit<Accounting, 'lost' | 'lateReports'> {
  setup: SetupName;
  nodes: number;
  durationS: number;
  kills: number;
  killsSurvived: number;
  postgresRestarts: number;
  unexpectedExits: string[];
  failedStarts: number;
  acceptedBySource: Record<string, number>;
  refused: Record<string, number>;
  lost: number;
  /** Lost reports by the kill or restart nearest to when they were sent. */
  lostNear: Record<string, number>;
  /** The first lost reports, examined. */
  lostReports: LostReport[];
  /** Reports applied after a later one of their source, by the kill or restart nearest to when they were sent. */
  lateNear: Record<string, number>;
  /** The first of those: which, when sent, and what happened nearest. */
  late: string[];
  /** Messages left pending or delivering when the drain timed out, and messages that failed. */
  undrained: number;
  failedMessages: number;
  badSignatures: number;
  receiverRefused: number;
  fuzz: FuzzFigures;
  events: ChaosEvent[];
  /** Warnings and errors the nodes logged, most frequent first. */
  logged: LoggedProblem[];
}

interface Infrastructure {
  nodeSettings: Record<string, string>;
  /** Where devices connect. */
  mqttUrl: string;
  nodeCount: number;
  postgres?: PrivatePostgres;
}

async function sqliteInfrastructure(dir: string): Promise<Infrastructure> {
  const mqttPort = await freePort();
  return { nodeSettings: { DATABASE_URL: `sqlite:${join(dir, 'chaos.db')}`, MQTT_PORT: String(mqttPort) }, mqttUrl: `mqtt://127.0.0.1:${mqttPort}`, nodeCount: 1 };
}

async function postgresInfrastructure(dir: string, cleanup: Cleanup): Promise<Infrastructure> {
  const postgres = await startPrivatePostgres();
  cleanup.defer(() => postgres.dispose());
  const mosquitto = await startMosquitto(dir, await freePort(), cleanup);
  cleanup.defer(() => mosquitto.stop());
  return {
    // Short timeouts, so that the outage is answered 2000 quickly rather than waited out.
    nodeSettings: { DATABASE_URL: `${postgres.url}?connect_timeout=2&statement_timeout=5000`, MQTT_PORT: '0', MQTT_URL: mosquitto.url },
    mqttUrl: mosquitto.url,
    nodeCount: 2,
    postgres,
  };
}

export async function runSetup(setup: SetupName, settings: ChaosSettings, cleanup: Cleanup, say: (line: string) => void): Promise<SetupResult> {
  const dir = cleanup.tempDir(`appliance-cloud-chaos-${setup}-`);
  say(`${setup}: working in ${dir}`);
  const receiver = await startReceiver(settings.receiverFailureRate);
  cleanup.defer(() => receiver.close());
  const infrastructure = setup === 'sqlite' ? await sqliteInfrastructure(dir) : await postgresInfrastructure(dir, cleanup);
  const nodes: ServeNode[] = [];
  for (const name of ['A', 'B'].slice(0, infrastructure.nodeCount)) {
    const node = new ServeNode(name, await freePort(), settings.entry, { ...NODE_SETTINGS, ...infrastructure.nodeSettings }, join(dir, `node-${name}.log`), cleanup);
    cleanup.defer(() => node.close());
    nodes.push(node);
  }
  await Promise.all(nodes.map((node) => node.start()));
  const world = await createWorld(nodes[0]!.url, receiver.url, settings.devices);
  receiver.trust(world.webhookSecret);
  const devices = await Promise.all(world.devices.map(({ deviceId, secret }) => ChaosDevice.connect(infrastructure.mqttUrl, deviceId, secret)));
  cleanup.defer(() => Promise.all(devices.map((device) => device.close())));
  say(`${setup}: ${nodes.length} node(s), ${devices.length} devices; load for ${settings.durationS} s${settings.kills ? ` or ${settings.kills} kills` : ''}, SIGKILL every ~${settings.killIntervalS} s`);

  const started = Date.now();
  const events: ChaosEvent[] = [];
  const record = (what: string) => {
    events.push({ at: (Date.now() - started) / 1000, what });
    say(`  ${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s  ${what}`);
  };
  const load = new Load(world, settings, () => pickUp(nodes), started);
  load.start(devices);
  const chaos = await chaosLoop(
    nodes,
    { started, until: started + settings.durationS * 1000, intervalMs: settings.killIntervalS * 1000, maxKills: settings.kills || Infinity, postgres: infrastructure.postgres },
    record,
  );
  await load.stop(STOP_GRACE_MS);
  const durationS = (Date.now() - started) / 1000;
  await Promise.all(devices.map((device) => device.close()));
  record('load stopped; draining the outbox');

  const allArrived = () => account(load.accepted, receiver.arrivals).lost.length === 0;
  const drained = await drain(nodes[0]!.url, world.serviceId, settings.drainTimeoutS * 1000, allArrived);
  const accounting = account(load.accepted, receiver.arrivals);
  const lostReports = await examineLost(nodes[0]!.url, world.serviceId, accounting.lost.slice(0, LOST_EXAMINED), started, events);
  await Promise.all(nodes.map((node) => node.stop()));
  const { lost, lateReports, ...figures } = accounting;
  return {
    setup,
    nodes: nodes.length,
    durationS,
    ...chaos,
    unexpectedExits: nodes.flatMap((node) => node.unexpectedExits.map((exit) => `${node.name}: ${exit}`)),
    failedStarts: nodes.reduce((sum, node) => sum + node.failedStarts, 0),
    ...figures,
    acceptedBySource: countBy(load.accepted.map((a) => a.source)),
    refused: Object.fromEntries(load.refused),
    lost: lost.length,
    lostNear: countBy(lost.map((report) => nearest(events, report.sentAt / 1000)?.what ?? 'no event')),
    lostReports,
    lateNear: countBy(lateReports.map((report) => nearest(events, report.sentAt / 1000)?.what ?? 'no event')),
    late: lateReports.slice(0, LOST_EXAMINED).map((r) => `${r.deviceId} ${r.source} #${r.n} sent at ${(r.sentAt / 1000).toFixed(1)} s, acknowledged ${((r.at - r.sentAt) / 1000).toFixed(1)} s later, ${nearestEvent(events, r.sentAt / 1000)}`),
    ...drained,
    badSignatures: receiver.badSignatures(),
    receiverRefused: receiver.refused(),
    fuzz: load.fuzz,
    events,
    logged: nodes.flatMap((node) => loggedProblems(node.logFile).map((problem) => ({ ...problem, message: `${node.name}: ${problem.message}` }))),
  };
}

/** A node that is up, at random: no sticky sessions. */
function pickUp(nodes: readonly ServeNode[]): string | undefined {
  const up = nodes.filter((node) => node.up);
  return up.length ? up[Math.floor(Math.random() * up.length)]!.url : undefined;
}

interface ChaosPlan {
  started: number;
  until: number;
  intervalMs: number;
  /** Stop once this many kills were survived. */
  maxKills: number;
  /** Restarted once, midway. */
  postgres?: PrivatePostgres;
}

/**
 * Every interval (±25 %) until the end of the plan: SIGKILL of the next node in turn, then its start
 * on the same ports and database. A node is killed only while every other node is up, so that with
 * two the deployment never goes dark; with one it does every time. Midway (in time or in kills),
 * PostgreSQL is restarted as well, while the kills go on.
 */
async function chaosLoop(nodes: readonly ServeNode[], plan: ChaosPlan, record: (what: string) => void): Promise<{ kills: number; killsSurvived: number; postgresRestarts: number }> {
  let kills = 0;
  let killsSurvived = 0;
  let restart: Promise<void> | undefined;
  const midway = () => Date.now() >= (plan.started + plan.until) / 2 || killsSurvived >= plan.maxKills / 2;
  for (let turn = 0; ; turn++) {
    const next = Date.now() + plan.intervalMs * (0.75 + Math.random() / 2);
    await sleep(Math.min(next, plan.until) - Date.now());
    // The last kill is followed by an interval of load on the node it restarted.
    if (Date.now() >= plan.until || killsSurvived >= plan.maxKills) break;
    if (plan.postgres && !restart && midway()) restart = restartPostgres(plan.postgres, record);
    const victim = nodes[turn % nodes.length]!;
    if (nodes.some((node) => node !== victim && !node.up)) {
      record(`${victim.name} spared: another node is down`);
      continue;
    }
    await victim.kill();
    kills++;
    record(`SIGKILL ${victim.name}`);
    await victim.start();
    killsSurvived++;
    record(`${victim.name} up again`);
  }
  await restart;
  return { kills, killsSurvived, postgresRestarts: restart ? 1 : 0 };
}

/** Stops PostgreSQL as a crash would (`-m immediate`), and starts it again a second later. */
async function restartPostgres(postgres: PrivatePostgres, record: (what: string) => void): Promise<void> {
  record('PostgreSQL stopped (immediate)');
  await postgres.stop('immediate');
  await sleep(1000);
  await postgres.start();
  record('PostgreSQL started');
}

/** The service's messages in `status` (up to 1000). */
async function messages(nodeUrl: string, serviceId: string, query: string): Promise<{ status: string; body: { event?: { report?: unknown } } }[]> {
  const answer = await call(nodeUrl, 'GET', `/admin/services/${serviceId}/messages?limit=1000&${query}`, { authorization: `Bearer ${ADMIN_TOKEN}` });
  return ok(answer, 'list messages');
}

/**
 * Waits until no message is pending or delivering, twice a second apart (a report in flight may still
 * add one), and every accepted report has arrived: reports a broker took while the node holding the
 * device stream was down reach the outbox only once a node holds it again (its lease runs out 3 s
 * after the kill). What has not arrived by the timeout is lost.
 */
async function drain(nodeUrl: string, serviceId: string, timeoutMs: number, allArrived: () => boolean): Promise<{ undrained: number; failedMessages: number }> {
  const deadline = Date.now() + timeoutMs;
  let quiet = 0;
  for (;;) {
    const open = (await messages(nodeUrl, serviceId, 'status=pending')).length + (await messages(nodeUrl, serviceId, 'status=delivering')).length;
    quiet = open === 0 && allArrived() ? quiet + 1 : 0;
    if (quiet === 2 || Date.now() > deadline) return { undrained: open, failedMessages: (await messages(nodeUrl, serviceId, 'status=failed')).length };
    await sleep(1000);
  }
}

/** For each lost report: is there a message carrying it in the outbox, and what happened just before it was sent. */
async function examineLost(nodeUrl: string, serviceId: string, lost: Accepted[], started: number, events: ChaosEvent[]): Promise<LostReport[]> {
  const examined: LostReport[] = [];
  for (const report of lost) {
    const since = formatTimestamp(started + report.sentAt - 5000);
    const listed = await messages(nodeUrl, serviceId, `deviceId=${report.deviceId}&since=${since}`);
    const carrier = listed.find((m) => changesOf(m.body.event?.report).some((c) => c.source === report.source && c.n === report.n));
    examined.push({ ...report, outbox: carrier?.status ?? 'absent', nearest: nearestEvent(events, report.sentAt / 1000) });
  }
  return examined;
}

/** The event nearest to `at` (seconds). */
function nearest(events: readonly ChaosEvent[], at: number): ChaosEvent | undefined {
  return [...events].sort((a, b) => Math.abs(a.at - at) - Math.abs(b.at - at))[0];
}

/** `0.3 s before SIGKILL A` */
function nearestEvent(events: readonly ChaosEvent[], at: number): string {
  const event = nearest(events, at);
  return event ? `${Math.abs(event.at - at).toFixed(1)} s ${event.at >= at ? 'before' : 'after'} ${event.what}` : 'no event';
}

function countBy(keys: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const key of keys) counts[key] = (counts[key] ?? 0) + 1;
  return counts;
}
