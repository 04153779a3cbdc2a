/** Scenario 1: GET /devices/{id} with every header checked, on SQLite, against the raw baseline. */
import { measureAgainstRaw, type Comparison } from './lib/compare.js';
import { throughputFigures } from './lib/figures.js';
import { ceilingFigure, type Scenario } from './lib/scenario.js';
import { SERVER_CONDITIONS, withServer } from './lib/server.js';
import { prepareIdentities, seedWorld, statusRequest, TWELVE_TYPES } from './lib/world.js';

export const scenario: Scenario = {
  number: 1,
  name: 'status-read',
  title: 'Status read (GET /devices/{id}), one user with 12 virtual appliances',
  conditions: { ...SERVER_CONDITIONS },
  async run(settings) {
    const world = await seedWorld({ services: 1, users: 1, devicesPerUser: 12, deviceTypes: TWELVE_TYPES, virtual: true, identities: 1 });
    try {
      const measured = await withServer(settings.serverEntry, world.databaseFile, async (server) => {
        await prepareIdentities(server.url, world.identities);
        const identity = world.identities[0]!;
        // Connection i reads device i mod 12: every appliance type's status, each from its own connections.
        return measureAgainstRaw(server, identity.deviceIds.map((deviceId) => [statusRequest(identity, deviceId)]), settings);
      });
      // Each connection sends its next request on the answer, so the mean latency is connections / throughput (Little's law).
      const p99 = ({ app, raw }: Comparison, generator: string) =>
        ceilingFigure(`p99 latency at ${settings.connections} connections${generator}`, 'ms', app.p99Ms, 5, { label: 'raw p99', value: raw.p99Ms }, {
          p50Ms: app.p50Ms,
          littleMeanMs: (settings.connections / app.requestsPerSecond) * 1000,
        });
      return [...throughputFigures(measured, 0.6), p99(measured, ''), ...(measured.wrk ? [p99(measured.wrk, ' (wrk)')] : [])];
    } finally {
      world.remove();
    }
  },
};
