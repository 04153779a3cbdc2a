/**
 * `npm run bench [-- name …]`: runs every scenario of bench/ (each `bench/*.ts` exporting `scenario`),
 * or the named ones, writes bench/results/<name>.json and regenerates the table in BENCHMARKS.md.
 *
 * BENCH_SECONDS (4), BENCH_ROUNDS (5), BENCH_WARMUP_SECONDS (3) and BENCH_CONNECTIONS (50) tune the
 * load; BENCH_SERVER_NODE_OPTIONS passes node flags to the server under test (e.g. `--cpu-prof`);
 * BENCH_SERVER_ENTRY runs a server built elsewhere (another revision, for a before/after comparison).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildServer, ROOT } from './lib/build.js';
import { readResults, writeResult, writeTable } from './lib/report.js';
import type { BenchSettings, Scenario } from './lib/scenario.js';

function isScenario(value: unknown): value is Scenario {
  const candidate = value as Partial<Scenario> | undefined;
  return typeof candidate?.name === 'string' && typeof candidate.number === 'number' && typeof candidate.run === 'function';
}

/** The scenarios of bench/, in the order of issue 7. */
async function discover(): Promise<Scenario[]> {
  const dir = join(ROOT, 'bench');
  const scenarios: Scenario[] = [];
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.ts') && name !== 'run.ts')) {
    const module = (await import(pathToFileURL(join(dir, file)).href)) as { scenario?: unknown };
    if (isScenario(module.scenario)) scenarios.push(module.scenario);
  }
  return scenarios.sort((a, b) => a.number - b.number);
}

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!(value > 0)) throw new Error(`${name} must be a positive number; got ${JSON.stringify(raw)}`);
  return value;
}

const available = await discover();
const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !available.some((s) => s.name === name));
if (unknown.length) {
  console.error(`Unknown scenario ${unknown.join(', ')}; there are: ${available.map((s) => s.name).join(', ')}`);
  process.exit(2);
}
const chosen = wanted.length ? available.filter((s) => wanted.includes(s.name)) : available;

const settings: BenchSettings = {
  seconds: positive('BENCH_SECONDS', 4),
  rounds: Math.round(positive('BENCH_ROUNDS', 5)),
  warmupSeconds: positive('BENCH_WARMUP_SECONDS', 3),
  connections: Math.round(positive('BENCH_CONNECTIONS', 50)),
  serverEntry: process.env.BENCH_SERVER_ENTRY || buildServer(),
};

let failed = 0;
for (const scenario of chosen) {
  console.log(`\n== ${scenario.number}. ${scenario.name}: ${scenario.title}`);
  try {
    const figures = await scenario.run(settings);
    writeResult(scenario, settings, figures);
    for (const f of figures) {
      const against = f.ratio === null ? '' : ` = ${f.ratio.toFixed(2)} × ${f.baseline!.label}`;
      console.log(`   ${f.met ? 'met   ' : 'MISSED'} ${f.figure}: ${f.value.toFixed(2)} ${f.unit}${against} (target ${f.target})`);
    }
  } catch (error) {
    failed += 1;
    console.error(`   FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  }
}
writeTable(readResults());
process.exit(failed ? 1 : 0);
