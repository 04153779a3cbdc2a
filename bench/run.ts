/**
 * `npm run bench [-- name …]`: runs every scenario of bench/ (each `bench/*.ts` exporting `scenario`),
 * or the named ones, writes bench/results/<name>.json and regenerates the table in BENCHMARKS.md.
 *
 * BENCH_SECONDS (4), BENCH_ROUNDS (5), BENCH_WARMUP_SECONDS (3) and BENCH_CONNECTIONS (50) tune the
 * load; BENCH_SERVER_NODE_OPTIONS passes node flags to the server under test (e.g. `--cpu-prof`);
 * BENCH_SERVER_ENTRY runs a server built elsewhere (another revision, for a before/after comparison).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildServer, ROOT } from './lib/build.js';
import { readResults, writeResult, writeTable } from './lib/report.js';
import { loadSettings, type BenchSettings, type Scenario } from './lib/scenario.js';

/** A scenario named that does not exist, or is not one: exit code 2. */
class UsageError extends Error {}

function isScenario(value: unknown): value is Scenario {
  const candidate = value as Partial<Scenario> | undefined;
  return typeof candidate?.name === 'string' && typeof candidate.number === 'number' && typeof candidate.run === 'function';
}

/**
 * The scenarios of bench/ (all, or those named: `<name>.ts`), in the order of issue 7. A file is
 * imported only if it declares `export const scenario`, so that a script which does its work when
 * imported is not set off by a run of other scenarios.
 */
async function discover(names: string[]): Promise<Scenario[]> {
  const dir = join(ROOT, 'bench');
  const files = names.length ? names.map((name) => `${name}.ts`) : readdirSync(dir).filter((name) => name.endsWith('.ts') && name !== 'run.ts');
  const scenarios: Scenario[] = [];
  for (const file of files) {
    const path = join(dir, file);
    if (!existsSync(path)) throw new UsageError(`There is no bench/${file}.`);
    if (!/^export const scenario\b/m.test(readFileSync(path, 'utf8'))) {
      console.log(`bench/${file} declares no scenario: run it on its own (node --import tsx bench/${file}).`);
      continue;
    }
    const module = (await import(pathToFileURL(path).href)) as { scenario?: unknown };
    if (!isScenario(module.scenario)) throw new UsageError(`bench/${file}: its scenario lacks a name, a number or run().`);
    scenarios.push(module.scenario);
  }
  return scenarios.sort((a, b) => a.number - b.number);
}

let chosen: Scenario[];
try {
  chosen = await discover(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  console.error(error.message);
  process.exit(2);
}

const settings: BenchSettings = { ...loadSettings({ seconds: 4, rounds: 5 }), serverEntry: process.env.BENCH_SERVER_ENTRY || buildServer() };

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
