/**
 * Scenario 3: control of a virtual appliance (POST /devices/{id}): validated against the profile,
 * sent to the simulator, its status written with a DEVICE_STATUS message in the outbox.
 */
import { measureAgainstRaw } from './lib/compare.js';
import { throughputFigures } from './lib/figures.js';
import type { Scenario } from './lib/scenario.js';
import { SERVER_CONDITIONS, withServer } from './lib/server.js';
import { controlRequest, prepareIdentities, seedWorld } from './lib/world.js';

/** Two commands in turn, so that every control changes the status and so writes it and its message. */
const COMMANDS = [{ airFlow: { windStrength: 'TURBO' } }, { airFlow: { windStrength: 'LOW' } }];

export const scenario: Scenario = {
  number: 3,
  name: 'control',
  title: 'Control of a virtual appliance (POST /devices/{id}), one ceiling fan per user, each subscribed to events',
  conditions: { ...SERVER_CONDITIONS },
  async run(settings) {
    // One user and fan per connection: users control their own appliances, not all the same one.
    const world = await seedWorld({
      services: 1,
      users: settings.connections,
      devicesPerUser: 1,
      deviceTypes: ['DEVICE_CEILING_FAN'],
      virtual: true,
      identities: settings.connections,
    });
    try {
      const measured = await withServer(settings.serverEntry, world.databaseFile, async (server) => {
        await prepareIdentities(server.url, world.identities, { subscribeEvents: true });
        const perConnection = world.identities.map((identity) => COMMANDS.map((command) => controlRequest(identity, identity.deviceIds[0]!, command)));
        return measureAgainstRaw(server, perConnection, settings);
      });
      return throughputFigures(measured, 0.3);
    } finally {
      world.remove();
    }
  },
};
