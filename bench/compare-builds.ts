/**
 * `npm run bench:compare -- <load> <build> <build> …`: one load on servers built from several trees,
 * measured round by round in turn so that a shared machine's noise hits each alike. Prints each
 * build's requests/s and CPU µs per request (medians), and their ratios to the first build's, paired
 * by round, each with the interval that holds it at 95 % or more (medianInterval). A build is `.`
 * (the working tree), a git revision (`HEAD~1`, a hash), or the path of a compiled CLI entry
 * (`…/dist/cli/index.js`).
 *
 * Why: a change worth 5 % moves a figure less than two `npm run bench` one after the other differ on
 * these machines. Rounds of two builds run side by side put both in the same moment of the host.
 *
 * Loads: `control` (scenario 3's world and commands) and `status-read` (scenario 1's). Each build
 * gets a world of its own (a server writes its file). BENCH_SECONDS (2), BENCH_ROUNDS (10),
 * BENCH_WARMUP_SECONDS (3) and BENCH_CONNECTIONS (50) tune the load.
 */
import { existsSync } from 'node:fs';
import { buildRevision, buildServer } from './lib/build.js';
import { measure, pairedRatios, type Round, type Summary, type Target } from './lib/compare.js';
import type { HttpRequest } from './lib/load.js';
import { loadSettings, median, medianInterval } from './lib/scenario.js';
import { startServer } from './lib/server.js';
import { prepareIdentities, type World } from './lib/world.js';
import { controlLoad, controlWorld } from './control.js';
import { statusLoad, statusWorld } from './status-read.js';

interface Load {
  seed(connections: number): Promise<World>;
  perConnection(world: World): HttpRequest[][];
  subscribeEvents: boolean;
}

// A Map: the load's name comes from the command line (`constructor` is not a load).
const LOADS = new Map<string, Load>([
  ['control', { seed: controlWorld, perConnection: controlLoad, subscribeEvents: true }],
  ['status-read', { seed: statusWorld, perConnection: statusLoad, subscribeEvents: false }],
]);

const [loadName, ...builds] = process.argv.slice(2);
const load = loadName === undefined ? undefined : LOADS.get(loadName);
if (load === undefined || builds.length < 2) {
  console.error(`usage: npm run bench:compare -- <${[...LOADS.keys()].join('|')}> <build> <build> … (a build: ., a git revision, or a dist/cli/index.js)`);
  process.exit(2);
}

function entryOf(build: string): string {
  if (build === '.') return buildServer();
  if (build.endsWith('.js') && existsSync(build)) return build;
  return buildRevision(build);
}

/** The paired ratio with the interval its rounds give for it, e.g. `1.078 (0.942–1.155)`. */
function ratioOf(summary: Summary, first: Summary, of: (round: Round) => number): string {
  const ratios = pairedRatios(summary, first, of);
  const { low, high } = medianInterval(ratios);
  return `${median(ratios).toFixed(3)} (${low.toFixed(3)}–${high.toFixed(3)})`;
}

const settings = loadSettings({ seconds: 2, rounds: 10 });

// Labels by position: the same revision may be named twice (an A/A run shows the noise left).
const labels = builds.map((build, i) => `${i + 1}. ${build}`);
const targets: Target[] = [];
const stops: (() => Promise<void>)[] = [];
try {
  for (const [i, build] of builds.entries()) {
    const world = await load.seed(settings.connections);
    const server = await startServer(entryOf(build), world.databaseFile);
    stops.push(async () => {
      await server.stop();
      world.remove();
    });
    await prepareIdentities(server.url, world.identities, { subscribeEvents: load.subscribeEvents });
    targets.push({ label: labels[i]!, url: server.url, pid: server.pid, perConnection: load.perConnection(world) });
  }
  const results = await measure(targets, { ...settings, serverEntry: '' });
  const first = results[labels[0]!]!;
  const { coverage } = medianInterval(first.rounds.map((r) => r.requestsPerSecond));
  console.log(`\n${loadName}: ${settings.rounds} rounds of ${settings.seconds} s each, ${settings.connections} connections`);
  console.log(`ratios to the first build: median of the rounds' (the interval holding it at ${(coverage * 100).toFixed(1)} %; one that holds 1 is noise)`);
  for (const label of labels) {
    const summary = results[label]!;
    console.log(
      [
        label.padEnd(Math.max(...labels.map((l) => l.length))),
        `${Math.round(summary.requestsPerSecond)} req/s`.padStart(12),
        `${summary.cpuUsPerRequest.toFixed(1)} µs CPU/request`.padStart(22),
        `× first: req/s ${ratioOf(summary, first, (r) => r.requestsPerSecond)}, CPU ${ratioOf(summary, first, (r) => r.cpuUsPerRequest)}`,
        `(rounds: ${summary.rounds.map((r) => Math.round(r.requestsPerSecond)).join(' ')})`,
      ].join('  '),
    );
  }
} finally {
  for (const stop of stops) await stop();
}
