/**
 * What a benchmark scenario is: any `bench/*.ts` file that exports `scenario` of this shape is run by
 * `bench/run.ts`, which writes its figures to `bench/results/<name>.json` and into BENCHMARKS.md.
 */

/** How long each measurement lasts and how often it is repeated; from BENCH_SECONDS and BENCH_ROUNDS. */
export interface BenchSettings {
  /** Seconds of load per measurement. */
  seconds: number;
  /** Measurements of the app and of its baseline, interleaved, of which the medians are reported. */
  rounds: number;
  /** Seconds of load on the app before measuring, so that the JIT and the caches are warm. */
  warmupSeconds: number;
  /** Concurrent connections of the load generator. */
  connections: number;
  /** The compiled CLI entry the server under test runs from (`node <serverEntry> serve`). */
  serverEntry: string;
}

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!(value > 0)) throw new Error(`${name} must be a positive number; got ${JSON.stringify(raw)}`);
  return value;
}

/** The load as BENCH_SECONDS, BENCH_ROUNDS, BENCH_WARMUP_SECONDS (3) and BENCH_CONNECTIONS (50) set it. */
export function loadSettings(defaults: { seconds: number; rounds: number }): Omit<BenchSettings, 'serverEntry'> {
  return {
    seconds: positive('BENCH_SECONDS', defaults.seconds),
    rounds: Math.round(positive('BENCH_ROUNDS', defaults.rounds)),
    warmupSeconds: positive('BENCH_WARMUP_SECONDS', 3),
    connections: Math.round(positive('BENCH_CONNECTIONS', 50)),
  };
}

export interface Figure {
  /** What was measured, e.g. `requests/s`. */
  figure: string;
  value: number;
  unit: string;
  /** What the value is compared with, measured in the same run; null for an absolute target. */
  baseline: { label: string; value: number } | null;
  /** To the baseline: the median of the ratios of rounds measured side by side (close to value / baseline.value); null without a baseline. */
  ratio: number | null;
  /** The target of issue 7, in words, e.g. `≥ 0.6 × raw`. */
  target: string;
  met: boolean;
  /** Anything that explains the figure: latencies, per-round values, errors. */
  details?: Record<string, unknown>;
}

export interface Scenario {
  /** Its number in issue 7; orders the table. */
  number: number;
  /** The file name stem and the CLI argument: `status-read`. */
  name: string;
  title: string;
  /** What operators would set for a benchmark, as the scenario ran it (e.g. LOG_LEVEL). */
  conditions: Record<string, string>;
  run(settings: BenchSettings): Promise<Figure[]>;
}

/** A figure compared with a baseline: `met` when the ratio reaches `minRatio`. */
export function ratioFigure(input: {
  figure: string;
  unit: string;
  value: number;
  baseline: { label: string; value: number };
  /** When measured otherwise than value / baseline.value (paired by round). */
  ratio?: number;
  minRatio: number;
  target: string;
  details?: Record<string, unknown>;
}): Figure {
  const { figure, unit, value, baseline, minRatio, target, details } = input;
  const ratio = input.ratio ?? (baseline.value > 0 ? value / baseline.value : 0);
  return { figure, value, unit, baseline, ratio, target, met: ratio >= minRatio, ...(details ? { details } : {}) };
}

/** A figure with an absolute ceiling, optionally shown next to a reference measured in the same run. */
export function ceilingFigure(
  figure: string,
  unit: string,
  value: number,
  max: number,
  reference: { label: string; value: number } | null,
  details?: Record<string, unknown>,
): Figure {
  const ratio = reference && reference.value > 0 ? value / reference.value : null;
  return { figure, value, unit, baseline: reference, ratio, target: `≤ ${max} ${unit}`, met: value <= max, ...(details ? { details } : {}) };
}

/** The median of a non-empty list. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Where the median of what was sampled lies, and how sure that is (the share of samplings it holds for). */
export interface MedianInterval {
  low: number;
  high: number;
  coverage: number;
}

/**
 * The interval of order statistics that holds the median with at least `level` probability
 * whatever the distribution (the sign test's): [x(k), x(n+1-k)] with the largest such k. With too
 * few values for `level`, their whole range, at the coverage it has. Ten rounds give x(2)..x(9) at
 * 97.9 %. A paired ratio whose interval holds 1 is within the noise of its run.
 */
export function medianInterval(values: number[], level = 0.95): MedianInterval {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  // P(Binomial(n, 1/2) <= j), summed as j grows.
  let below = 0;
  let choose = 1;
  let k = 1;
  let coverage = 1 - 2 * 0.5 ** n;
  for (let j = 0; 2 * (j + 1) < n; j += 1) {
    below += choose * 0.5 ** n;
    choose = (choose * (n - j)) / (j + 1);
    const next = 1 - 2 * (below + choose * 0.5 ** n);
    if (next < level) break;
    k = j + 2;
    coverage = next;
  }
  return { low: sorted[k - 1]!, high: sorted[n - k]!, coverage };
}
