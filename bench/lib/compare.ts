/**
 * Measurements of several targets under the same load, interleaved round by round so that the noise
 * of a shared machine hits each alike; ratios are taken between the rounds measured side by side.
 */
import { load, type HttpRequest, type LoadResult, type LoadSpec } from './load.js';
import { cpuSecondsOf } from './proc.js';
import { capture, startRawServer } from './raw.js';
import { median, type BenchSettings } from './scenario.js';
import { wrkAvailable, wrkLoad } from './wrk.js';

/** A load generator: autocannon (`load`) or wrk (`wrkLoad`). */
type Generator = (spec: LoadSpec) => Promise<LoadResult>;

export interface Target {
  label: string;
  url: string;
  /** The serving process, whose CPU time per request is measured. */
  pid: number;
  perConnection: HttpRequest[][];
}

export interface Round extends LoadResult {
  /** CPU time of the serving process per successful request. */
  cpuUsPerRequest: number;
}

export interface Summary {
  /** Medians over the rounds. */
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerRequest: number;
  rounds: Round[];
}

function summarise(rounds: Round[]): Summary {
  const of = (pick: (r: Round) => number) => median(rounds.map(pick));
  return { requestsPerSecond: of((r) => r.requestsPerSecond), p50Ms: of((r) => r.p50Ms), p99Ms: of((r) => r.p99Ms), cpuUsPerRequest: of((r) => r.cpuUsPerRequest), rounds };
}

async function measureOnce(target: Target, connections: number, seconds: number, generate: Generator): Promise<Round> {
  const cpuBefore = cpuSecondsOf(target.pid);
  const result = await generate({ url: target.url, connections, seconds, perConnection: target.perConnection });
  return { ...result, cpuUsPerRequest: ((cpuSecondsOf(target.pid) - cpuBefore) * 1e6) / result.ok };
}

/** Warms each target up, then measures each once per round; returns the summaries by label. */
export async function measure(targets: Target[], settings: BenchSettings, generate: Generator = load): Promise<Record<string, Summary>> {
  for (const target of targets) await generate({ url: target.url, connections: settings.connections, seconds: settings.warmupSeconds, perConnection: target.perConnection });
  const rounds: Record<string, Round[]> = Object.fromEntries(targets.map((t) => [t.label, []]));
  for (let round = 0; round < settings.rounds; round += 1) {
    for (const target of targets) rounds[target.label]!.push(await measureOnce(target, settings.connections, settings.seconds, generate));
  }
  return Object.fromEntries(Object.entries(rounds).map(([label, results]) => [label, summarise(results)]));
}

/** `of(target) / of(reference)` within each round. */
export function pairedRatios(target: Summary, reference: Summary, of: (round: Round) => number): number[] {
  return target.rounds.map((round, i) => of(round) / of(reference.rounds[i]!));
}

/** The median over rounds of `of(target) / of(reference)` within each round. */
export function pairedRatio(target: Summary, reference: Summary, of: (round: Round) => number): number {
  return median(pairedRatios(target, reference, of));
}

export interface Comparison {
  app: Summary;
  raw: Summary;
  /** Requests/s of the app over the raw server's, paired by round. */
  ratio: number;
}

/** Measured with autocannon, and with wrk too where it is installed. */
export interface AgainstRaw extends Comparison {
  wrk: Comparison | null;
}

/** The app against a raw node:http server replaying the app's own answers to the same requests. */
export async function measureAgainstRaw(app: { url: string; pid: number }, perConnection: HttpRequest[][], settings: BenchSettings): Promise<AgainstRaw> {
  const raw = await startRawServer(await capture(app.url, perConnection.flat()));
  const targets: Target[] = [{ label: 'raw', url: raw.url, pid: raw.pid, perConnection }, { label: 'app', url: app.url, pid: app.pid, perConnection }];
  const compare = async (generate: Generator): Promise<Comparison> => {
    const results = await measure(targets, settings, generate);
    const [appSummary, rawSummary] = [results.app!, results.raw!];
    return { app: appSummary, raw: rawSummary, ratio: pairedRatio(appSummary, rawSummary, (r) => r.requestsPerSecond) };
  };
  try {
    const autocannon = await compare(load);
    return { ...autocannon, wrk: wrkAvailable() ? await compare(wrkLoad) : null };
  } finally {
    raw.stop();
  }
}

/** What the JSON keeps of a summary. */
export function detailsOf(summary: Summary): Record<string, unknown> {
  const round = (n: number) => Math.round(n * 10) / 10;
  return {
    p50Ms: summary.p50Ms,
    p99Ms: summary.p99Ms,
    cpuUsPerRequest: round(summary.cpuUsPerRequest),
    perRound: summary.rounds.map((r) => ({
      requestsPerSecond: Math.round(r.requestsPerSecond),
      p50Ms: r.p50Ms,
      p99Ms: r.p99Ms,
      maxMs: r.maxMs,
      cpuUsPerRequest: round(r.cpuUsPerRequest),
      seconds: round(r.seconds),
    })),
  };
}
