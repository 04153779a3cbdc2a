/**
 * Scenario 5: the same status reads and device lists on a world of 100,000 devices and 1,000
 * services as on a small one, both served at once by two servers and measured in turn; the big
 * world's server's peak RSS and its start-up to ready.
 */
import { detailsOf, measure, pairedRatio, type Summary } from './lib/compare.js';
import { ceilingFigure, median, ratioFigure, type Figure, type Scenario } from './lib/scenario.js';
import { SERVER_CONDITIONS, startups, withServer } from './lib/server.js';
import { listRequest, prepareIdentities, seedWorld, statusRequest, TWELVE_TYPES, type Identity, type WorldSpec } from './lib/world.js';

const DEVICES = 100_000;
const SERVICES = 1_000;
const DEVICES_PER_USER = 12;
/** Start-ups measured per world, of which the median is reported (one start is at the mercy of the machine). */
const STARTS = 3;

/** The big world's requests/s over the small world's, paired by round; within 10 %. */
function versusSmall(figure: string, measured: Record<string, Summary>, smallWorld: string): Figure {
  const [big, small] = [measured.big!, measured.small!];
  return ratioFigure({
    figure,
    unit: 'req/s',
    value: big.requestsPerSecond,
    baseline: { label: smallWorld, value: small.requestsPerSecond },
    ratio: pairedRatio(big, small, (r) => r.requestsPerSecond),
    minRatio: 0.9,
    target: '≥ 0.9 × small world',
    details: { cpuRatio: pairedRatio(small, big, (r) => r.cpuUsPerRequest), big: detailsOf(big), small: detailsOf(small) },
  });
}

export const scenario: Scenario = {
  number: 5,
  name: 'scale',
  title: `Scale: ${DEVICES.toLocaleString('en')} devices and ${SERVICES.toLocaleString('en')} services against a world of the callers alone`,
  conditions: { ...SERVER_CONDITIONS },
  async run(settings) {
    // Real devices, marked online as the gateway would: a big world is mostly real appliances, and
    // virtual ones would set the simulator stepping 100,000 devices.
    const callers = settings.connections;
    const shape = { devicesPerUser: DEVICES_PER_USER, deviceTypes: TWELVE_TYPES, virtual: false, identities: callers };
    const smallSpec: WorldSpec = { ...shape, services: callers, users: callers };
    const bigSpec: WorldSpec = { ...shape, services: SERVICES, users: Math.ceil(DEVICES / DEVICES_PER_USER) };
    const small = await seedWorld(smallSpec);
    const big = await seedWorld(bigSpec);
    try {
      const smallStarts = await startups(settings.serverEntry, small.databaseFile, STARTS);
      const bigStarts = await startups(settings.serverEntry, big.databaseFile, STARTS);
      const startup = (starts: { ms: number }[]) => median(starts.map((s) => s.ms)) / 1000;
      return await withServer(settings.serverEntry, small.databaseFile, (smallServer) =>
        withServer(settings.serverEntry, big.databaseFile, async (bigServer) => {
          await prepareIdentities(smallServer.url, small.identities);
          await prepareIdentities(bigServer.url, big.identities);
          // Connection i calls as caller i (its own service, user and token) on device i mod 12.
          const statusOf = (identities: Identity[]) => identities.map((identity, i) => [statusRequest(identity, identity.deviceIds[i % DEVICES_PER_USER]!)]);
          const listOf = (identities: Identity[]) => identities.map((identity) => [listRequest(identity)]);
          const status = await measure([
            { label: 'small', url: smallServer.url, pid: smallServer.pid, perConnection: statusOf(small.identities) },
            { label: 'big', url: bigServer.url, pid: bigServer.pid, perConnection: statusOf(big.identities) },
          ], settings);
          const list = await measure([
            { label: 'small', url: smallServer.url, pid: smallServer.pid, perConnection: listOf(small.identities) },
            { label: 'big', url: bigServer.url, pid: bigServer.pid, perConnection: listOf(big.identities) },
          ], settings);
          const smallWorld = `${smallSpec.users * DEVICES_PER_USER} devices, ${smallSpec.services} services`;
          const figures: Figure[] = [
            versusSmall('status read, requests/s', status, smallWorld),
            versusSmall('device list, requests/s', list, smallWorld),
            ceilingFigure('peak RSS of the server', 'MB', bigServer.memory().peakRssMb, 300, { label: smallWorld, value: smallServer.memory().peakRssMb }, {
              rssNowMb: bigServer.memory().rssMb,
            }),
            ceilingFigure('start-up to ready', 's', startup(bigStarts), 3, { label: smallWorld, value: startup(smallStarts) }, {
              starts: { big: bigStarts, small: smallStarts },
              seedSeconds: { small: small.seedSeconds, big: big.seedSeconds },
            }),
          ];
          return figures;
        }),
      );
    } finally {
      small.remove();
      big.remove();
    }
  },
};
