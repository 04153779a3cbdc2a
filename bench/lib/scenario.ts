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
