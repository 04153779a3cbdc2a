/**
 * Scenario 3: control of a virtual appliance (POST /devices/{id}): validated against the profile,
 * sent to the simulator, its status written with a DEVICE_STATUS message in the outbox.
 */
import { measureAgainstRaw } from './lib/compare.js';
import { throughputFigures } from './lib/figures.js';
import type { Scenario } from './lib/scenario.js';
import { SERVER_CONDITIONS, withServer } from './lib/server.js';
import type { HttpRequest } from './lib/load.js';
import { controlRequest, prepareIdentities, seedWorld, type World } from './lib/world.js';

/** Two commands in turn, so that every control changes the status and so writes it and its message. */
const COMMANDS = [{ airFlow: { windStrength: 'TURBO' } }, { airFlow: { windStrength: 'LOW' } }];

export const scenario: Scenario = {
  number: 3,
  name: 'control',
  title: 'Control of a virtual appliance (POST /devices/{id}), one ceiling fan per user, each subscribed to events',
  conditions: { ...SERVER_CONDITIONS },
  async run(settings) {
    const world = await controlWorld(settings.connections);
    try {
      const measured = await withServer(settings.serverEntry, world.databaseFile, async (server) => {
        await prepareIdentities(server.url, world.identities, { subscribeEvents: true });
        return measureAgainstRaw(server, controlLoad(world), settings);
      });
      return throughputFigures(measured, 0.3);
    } finally {
      world.remove();
    }
  },
};

/** One user and fan per connection: users control their own appliances, not all the same one. */
export function controlWorld(connections: number): Promise<World> {
  return seedWorld({ services: 1, users: connections, devicesPerUser: 1, deviceTypes: ['DEVICE_CEILING_FAN'], virtual: true, identities: connections });
}

/** Each connection's requests, in turn: its user's fan told the two commands by turns. */
export function controlLoad(world: World): HttpRequest[][] {
  return world.identities.map((identity) => COMMANDS.map((command) => controlRequest(identity, identity.deviceIds[0]!, command)));
}
