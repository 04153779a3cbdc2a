/**
 * A `serve` node's gateway on an external broker, alone in a process of its own so that a test can
 * kill it with SIGKILL: `ready` once started, `holding` once it consumes the device stream, then
 * `report {deviceId} {n}` for each report it takes, in the order taken.
 * Settings: MQTT_URL; DATABASE_URL, the store the nodes share (their lease); DEPLOYMENT, its MQTT_DEPLOYMENT;
 * REPORT_DELAY_MS, how long each report takes to store (0).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../src/config.js';
import { startGateway } from '../../src/gateway/index.js';
import { openStore } from '../../src/store/index.js';
import { TEST_STREAM } from './settings.js';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const delayMs = Number(process.env.REPORT_DELAY_MS ?? 0);
const config = loadConfig('serve', { ADMIN_TOKEN: 'external-node', PORT: '0', MQTT_URL: process.env.MQTT_URL, MQTT_DEPLOYMENT: process.env.DEPLOYMENT });
const store = await openStore(process.env.DATABASE_URL!);
const gateway = await startGateway({
  config,
  devices: {
    reports: async (deviceId, reports) => {
      if (delayMs > 0) await sleep(delayMs);
      return reports.map((report) => process.stdout.write(`report ${deviceId} ${(report as { n: number }).n}\n`));
    },
    push: async () => undefined,
    setRealDevicesOffline: async () => 0,
    setConnection: async () => undefined,
  },
  store,
  // Devices authenticate at the external broker: nothing checks them against registrations here.
  registrations: { getDevice: () => undefined, onDeviceChanged: () => undefined },
  logger: quiet,
  ...TEST_STREAM,
});
process.stdout.write('ready\n');
const watch = setInterval(() => {
  if (!gateway.holdsDeviceStream()) return;
  process.stdout.write('holding\n');
  clearInterval(watch);
}, 20);
process.once('SIGTERM', () =>
  void gateway
    .close()
    .then(() => store.close())
    .then(() => process.exit(0)),
);
