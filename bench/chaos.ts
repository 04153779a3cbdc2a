/**
 * `npm run chaos [-- flags]` (issue 12): nodes killed with SIGKILL in a loop under load, and every
 * accepted report accounted for by webhook-id. Two setups, each on the compiled server (`dist/`):
 *
 * - sqlite: one `serve` on a SQLite file with its embedded MQTT broker, killed and started again;
 * - postgres: two `serve` nodes on a private PostgreSQL and a private Mosquitto, one or the other
 *   killed, and PostgreSQL itself restarted once mid-run (`-m immediate`).
 *
 * Prints a summary per setup, writes bench/results/chaos.json, and exits 0 only when no accepted
 * report was lost and nothing else broke the contract (duplicates with a new webhook-id, order,
 * signatures, invalid input accepted, a node exiting on its own). Children and temp directories are
 * removed at the end, also on SIGINT/SIGTERM.
 *
 *   --setups sqlite,postgres   --duration 120 (s per setup)   --kill-interval 5 (s)
 *   --kills 0 (stop once that many kills were survived, if before the duration; 0: no limit)
 *   --devices 16   --report-interval-ms 200   --http-interval-ms 500   --fuzz-rate 0.05
 *   --receiver-failure-rate 0.02   --drain-timeout 180 (s)   --entry bin/appliance-cloud.js
 *   --results bench/results/chaos.json
 */
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Cleanup } from './chaos/cleanup.js';
import { runSetup, SETUPS, type ChaosSettings, type SetupName, type SetupResult } from './chaos/setup.js';
import { ROOT } from './lib/build.js';
import { machine } from './lib/report.js';
import type { Figure } from './lib/scenario.js';

const { values } = parseArgs({
  options: {
    setups: { type: 'string', default: SETUPS.join(',') },
    duration: { type: 'string', default: '120' },
    'kill-interval': { type: 'string', default: '5' },
    kills: { type: 'string', default: '0' },
    devices: { type: 'string', default: '16' },
    'report-interval-ms': { type: 'string', default: '200' },
    'http-interval-ms': { type: 'string', default: '500' },
    'fuzz-rate': { type: 'string', default: '0.05' },
    'receiver-failure-rate': { type: 'string', default: '0.02' },
    'drain-timeout': { type: 'string', default: '180' },
    entry: { type: 'string', default: join(ROOT, 'bin', 'appliance-cloud.js') },
    results: { type: 'string', default: join(ROOT, 'bench', 'results', 'chaos.json') },
  },
});

/** A flag's number within [min, max], or exit 2 naming the flag. */
function number(name: keyof typeof values, min: number, max: number): number {
  const value = Number(values[name]);
  if (Number.isFinite(value) && value >= min && value <= max) return value;
  console.error(`--${name} must be a number from ${min} to ${max}; got ${JSON.stringify(values[name])}`);
  process.exit(2);
}

const setups = values.setups.split(',').map((name) => name.trim());
const unknown = setups.filter((name) => !(SETUPS as readonly string[]).includes(name));
if (unknown.length) {
  console.error(`--setups takes ${SETUPS.join(', ')}; got ${unknown.join(', ')}`);
  process.exit(2);
}
const entry = resolve(values.entry);
// bin/appliance-cloud.js runs dist/, which `npm run build` makes (`npm run chaos` builds first).
if (!existsSync(entry) || (entry.endsWith(join('bin', 'appliance-cloud.js')) && !existsSync(join(dirname(entry), '..', 'dist', 'cli', 'index.js')))) {
  console.error(`${entry} cannot run: build the server first with \`npm run build\``);
  process.exit(2);
}
const settings: ChaosSettings = {
  durationS: number('duration', 1, 3600),
  killIntervalS: number('kill-interval', 0.5, 600),
  kills: Math.round(number('kills', 0, 10_000)),
  // The event subscriptions per service and user are at most 100 by default.
  devices: number('devices', 1, 100),
  reportIntervalMs: number('report-interval-ms', 0, 60_000),
  httpIntervalMs: number('http-interval-ms', 0, 60_000),
  fuzzRate: number('fuzz-rate', 0, 1),
  receiverFailureRate: number('receiver-failure-rate', 0, 0.5),
  drainTimeoutS: number('drain-timeout', 1, 3600),
  entry,
};

let active: Cleanup | undefined;
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    interrupted = true;
    console.log(`${signal}: stopping every process and removing the temp directories`);
    void Promise.resolve(active?.run()).finally(() => process.exit(130));
  });
}
process.on('exit', () => active?.abandon());

/** What breaks the contract in a setup's figures; none means it passed. */
function problems(r: SetupResult): string[] {
  const found: [boolean, string][] = [
    [r.lost > 0, `${r.lost} accepted reports lost`],
    [r.duplicatesNewId > 0, `${r.duplicatesNewId} duplicates with a new webhook-id`],
    [r.sameIdOtherBody > 0, `${r.sameIdOtherBody} webhook-ids sent with different bodies`],
    [r.orderViolations > 0, `${r.orderViolations} messages delivered out of order`],
    [r.reportOrderViolations > 0, `${r.reportOrderViolations} reports applied out of the order they were sent`],
    [r.badSignatures > 0, `${r.badSignatures} deliveries failed signature verification`],
    [r.foreign > 0, `${r.foreign} DEVICE_STATUS messages no report of the load made`],
    [r.undrained > 0, `${r.undrained} messages still pending after the drain timeout`],
    [r.failedMessages > 0, `${r.failedMessages} messages failed`],
    [r.fuzz.accepted > 0, `${r.fuzz.accepted} invalid requests accepted`],
    [r.fuzz.notEnvelope > 0, `${r.fuzz.notEnvelope} invalid requests answered without an envelope`],
    [r.unexpectedExits.length > 0, `nodes exited on their own: ${r.unexpectedExits.join('; ')}`],
  ];
  return found.filter(([broken]) => broken).map(([, problem]) => problem);
}

function list(counts: Record<string, number>): string {
  const entries = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  return entries.length ? entries.map(([key, count]) => `${key} ${count}`).join(', ') : 'none';
}

function summary(r: SetupResult): string {
  const verdict = problems(r);
  return [
    `${r.setup}: ${r.nodes} node(s)${r.setup === 'sqlite' ? ', embedded MQTT broker' : ', Mosquitto, PostgreSQL restarted ' + r.postgresRestarts + ' time(s)'}`,
    `  duration           ${r.durationS.toFixed(1)} s; kills survived ${r.killsSurvived} of ${r.kills}; unexpected exits ${r.unexpectedExits.length}`,
    `  reports accepted   ${r.accepted} (${list(r.acceptedBySource)})`,
    `  not accepted       ${list(r.refused)}`,
    `  messages delivered ${r.delivered}; lost ${r.lost}; duplicates with the same id ${r.duplicatesSameId}, with a new id ${r.duplicatesNewId}`,
    `  order violations   ${r.orderViolations} in delivery; ${r.reportOrderViolations} reports applied out of the order they were sent`,
    `  also delivered     ${r.unanswered} changes of requests left unanswered by a killed node; ${r.receiverRefused} deliveries refused on purpose and retried`,
    `  fuzzed             ${r.fuzz.requests} requests (accepted ${r.fuzz.accepted}, not an envelope ${r.fuzz.notEnvelope}, 2000 ${r.fuzz.internalErrors}), ${r.fuzz.publishes} MQTT publishes`,
    ...(r.lost ? [`  lost near          ${list(r.lostNear)}`] : []),
    ...r.lostReports.slice(0, 5).map((l) => `  lost               ${l.deviceId} ${l.source} #${l.n} sent at ${(l.sentAt / 1000).toFixed(1)} s, outbox: ${l.outbox}, ${l.nearest}`),
    ...r.orderExamples.slice(0, 5).map((example) => `  out of order       ${example}`),
    ...(r.reportOrderViolations ? [`  late near          ${list(r.lateNear)}`] : []),
    ...r.late.slice(0, 5).map((late) => `  applied late       ${late}`),
    ...r.logged.slice(0, 5).map((p) => `  logged             ${p.count} × ${p.message}`),
    `  verdict            ${verdict.length ? `FAIL: ${verdict.join('; ')}` : 'PASS'}`,
  ].join('\n');
}

function figures(r: SetupResult): Figure[] {
  const zero = (figure: string, value: number, unit: string): Figure => ({ figure: `${r.setup}: ${figure}`, value, unit, baseline: null, ratio: null, target: '0', met: value === 0 });
  return [
    zero(`accepted reports lost (of ${r.accepted}, ${r.killsSurvived} kills survived)`, r.lost, 'reports'),
    zero('duplicates with a new webhook-id', r.duplicatesNewId, 'messages'),
    zero('messages delivered out of order', r.orderViolations, 'messages'),
    zero('reports applied out of the order they were sent', r.reportOrderViolations, 'reports'),
  ];
}

/** Runs the setups one after the other, writes the results; the exit code. */
async function main(): Promise<number> {
  const results: SetupResult[] = [];
  for (const setup of setups as SetupName[]) {
    active = new Cleanup();
    try {
      results.push(await runSetup(setup, settings, active, (line) => console.log(line)));
      console.log(`\n${summary(results.at(-1)!)}\n`);
    } finally {
      await active.run();
    }
  }
  if (interrupted) return 130;
  const { entry: _entry, ...kept } = settings;
  const file = resolve(values.results);
  mkdirSync(dirname(file), { recursive: true });
  // The shape of bench/results/*.json, so that the figures join the table of BENCHMARKS.md.
  const result = {
    scenario: 'chaos',
    title: 'Chaos: SIGKILL in a loop under load; every accepted report accounted for by webhook-id',
    date: new Date().toISOString(),
    machine: machine(),
    command: ['npm run chaos', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' '),
    conditions: { setups: setups.join(', ') },
    settings: kept,
    figures: results.flatMap(figures),
    setups: results,
  };
  writeFileSync(`${file}.tmp`, `${JSON.stringify(result, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
  console.log(`Results: ${file}`);
  return results.some((r) => problems(r).length > 0) ? 1 : 0;
}

// Once interrupted, the signal handler ends the process when its cleanup is done.
main().then(
  (code) => interrupted || process.exit(code),
  (error: unknown) => {
    if (interrupted) return;
    console.error(error);
    process.exit(1);
  },
);
