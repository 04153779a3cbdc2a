/**
 * A `serve` node's gateway on an external broker, alone in a process of its own so that a test can
 * kill it with SIGKILL: `ready` once it consumes, then `report {deviceId} {n}` for each report it takes.
 * Settings: PORT, MQTT_URL, SHARED_GROUP; REPORT_DELAY_MS, how long each report takes to store (0).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../src/config.js';
import { startGateway } from '../../src/gateway/index.js';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const delayMs = Number(process.env.REPORT_DELAY_MS ?? 0);
const config = loadConfig('serve', { ADMIN_TOKEN: 'external-node', PORT: process.env.PORT, MQTT_URL: process.env.MQTT_URL });
const gateway = await startGateway({
  config,
  devices: {
    reports: async (deviceId, reports) => {
      if (delayMs > 0) await sleep(delayMs);
      return reports.map((report) => process.stdout.write(`report ${deviceId} ${(report as { n: number }).n}\n`));
    },
    push: async () => undefined,
    setConnection: async () => undefined,
  },
  store: { getDevice: async () => undefined },
  logger: quiet,
  sharedGroup: process.env.SHARED_GROUP!,
});
process.stdout.write('ready\n');
process.once('SIGTERM', () => void gateway.close().then(() => process.exit(0)));
