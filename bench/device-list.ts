/** Scenario 2: GET /devices for a user with 12 devices, against the raw baseline. */
import { measureAgainstRaw } from './lib/compare.js';
import { throughputFigures } from './lib/figures.js';
import type { Scenario } from './lib/scenario.js';
import { SERVER_CONDITIONS, withServer } from './lib/server.js';
import { listRequest, prepareIdentities, seedWorld, TWELVE_TYPES } from './lib/world.js';

export const scenario: Scenario = {
  number: 2,
  name: 'device-list',
  title: 'Device list (GET /devices), a user with 12 devices',
  conditions: { ...SERVER_CONDITIONS },
  async run(settings) {
    const world = await seedWorld({ services: 1, users: 1, devicesPerUser: 12, deviceTypes: TWELVE_TYPES, virtual: true, identities: 1 });
    try {
      const measured = await withServer(settings.serverEntry, world.databaseFile, async (server) => {
        await prepareIdentities(server.url, world.identities);
        return measureAgainstRaw(server, [[listRequest(world.identities[0]!)]], settings);
      });
      return throughputFigures(measured, 0.5);
    } finally {
      world.remove();
    }
  },
};
