/** The figures every HTTP scenario reports against the raw baseline. */
import { detailsOf, pairedRatio, type AgainstRaw, type Comparison } from './compare.js';
import { ratioFigure, type Figure } from './scenario.js';

/**
 * Requests/s as a ratio to the raw server's. Its details carry the CPU time per request of both,
 * and their ratio: the throughput ratio the app would reach on an idle machine, steadier than
 * requests/s when other work shares the machine.
 */
export function throughputFigure(measured: Comparison, minRatio: number, generator = ''): Figure {
  const { app, raw, ratio } = measured;
  return ratioFigure({
    figure: `requests/s${generator}`,
    unit: 'req/s',
    value: app.requestsPerSecond,
    baseline: { label: 'raw node:http', value: raw.requestsPerSecond },
    ratio,
    minRatio,
    target: `≥ ${minRatio} × raw`,
    details: {
      cpuRatio: pairedRatio(raw, app, (r) => r.cpuUsPerRequest),
      app: detailsOf(app),
      raw: detailsOf(raw),
    },
  });
}

/** The throughput figure by autocannon, and by wrk when it ran. */
export function throughputFigures(measured: AgainstRaw, minRatio: number): Figure[] {
  return [throughputFigure(measured, minRatio), ...(measured.wrk ? [throughputFigure(measured.wrk, minRatio, ' (wrk)')] : [])];
}
