/** Scenario 1: GET /devices/{id} with every header checked, on SQLite, against the raw baseline. */
import { dirname, join } from 'node:path';
import { detailsOf, measure, measureAgainstRaw, pairedRatio, type Comparison } from './lib/compare.js';
import { throughputFigures } from './lib/figures.js';
import type { HttpRequest } from './lib/load.js';
import { ceilingFigure, ratioFigure, type BenchSettings, type Figure, type Scenario } from './lib/scenario.js';
import { SERVER_CONDITIONS, startServer, withServer, type ServerUnderTest } from './lib/server.js';
import { prepareIdentities, seedWorld, statusRequest, TWELVE_TYPES, type World } from './lib/world.js';

export const scenario: Scenario = {
  number: 1,
  name: 'status-read',
  title: 'Status read (GET /devices/{id}), one user with 12 virtual appliances',
  conditions: { ...SERVER_CONDITIONS },
  async run(settings) {
    const world = await statusWorld();
    try {
      const perConnection = statusLoad(world);
      const { measured, logging } = await withServer(settings.serverEntry, world.databaseFile, async (server) => {
        await prepareIdentities(server.url, world.identities);
        return { measured: await measureAgainstRaw(server, perConnection, settings), logging: await loggingCost(server, settings, world.databaseFile, perConnection) };
      });
      // Each connection sends its next request on the answer, so the mean latency is connections / throughput (Little's law).
      const p99 = ({ app, raw }: Comparison, generator: string) =>
        ceilingFigure(`p99 latency at ${settings.connections} connections${generator}`, 'ms', app.p99Ms, 5, { label: 'raw p99', value: raw.p99Ms }, {
          p50Ms: app.p50Ms,
          littleMeanMs: (settings.connections / app.requestsPerSecond) * 1000,
        });
      return [...throughputFigures(measured, 0.6), p99(measured, ''), ...(measured.wrk ? [p99(measured.wrk, ' (wrk)')] : []), logging];
    } finally {
      world.remove();
    }
  },
};

/** One user with 12 virtual appliances, one of each type. */
export function statusWorld(): Promise<World> {
  return seedWorld({ services: 1, users: 1, devicesPerUser: 12, deviceTypes: TWELVE_TYPES, virtual: true, identities: 1 });
}

/** Connection i reads device i mod 12: every appliance type's status, each from its own connections. */
export function statusLoad(world: World): HttpRequest[][] {
  const identity = world.identities[0]!;
  return identity.deviceIds.map((deviceId) => [statusRequest(identity, deviceId)]);
}

/**
 * What logging every request costs: the same build serving the same file with LOG_LEVEL=info, its
 * lines written to a file, against the server at warn, interleaved round by round.
 */
async function loggingCost(quiet: ServerUnderTest, settings: BenchSettings, databaseFile: string, perConnection: HttpRequest[][]): Promise<Figure> {
  const logFile = join(dirname(databaseFile), 'requests.log');
  const logged = await startServer(settings.serverEntry, databaseFile, { LOG_LEVEL: 'info' }, logFile);
  try {
    const results = await measure([
      { label: 'warn', url: quiet.url, pid: quiet.pid, perConnection },
      { label: 'info', url: logged.url, pid: logged.pid, perConnection },
    ], settings);
    const [info, warn] = [results.info!, results.warn!];
    return ratioFigure({
      figure: 'requests/s with every request logged (LOG_LEVEL=info, to a file)',
      unit: 'req/s',
      value: info.requestsPerSecond,
      baseline: { label: 'the same at LOG_LEVEL=warn', value: warn.requestsPerSecond },
      ratio: pairedRatio(info, warn, (r) => r.requestsPerSecond),
      minRatio: 0.9,
      target: '≥ 0.9 × warn (logging costs ≤ 10 %)',
      details: { cpuRatio: pairedRatio(warn, info, (r) => r.cpuUsPerRequest), info: detailsOf(info), warn: detailsOf(warn) },
    });
  } finally {
    await logged.stop();
  }
}
