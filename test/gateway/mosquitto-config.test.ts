/**
 * README's Mosquitto for several nodes (examples/mosquitto), run as it is on ports of its own: the
 * cloud on its listener, devices on theirs, each device held to its own topics and its own session
 * (DESIGN B: "a client id other than its own device id is refused, so no device can take over
 * another's session").
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { topicOf } from '../../src/device-protocol/topics.js';
import { Bridge } from '../../src/gateway/bridge.js';
import type { MqttCommandChannel } from '../../src/gateway/channel.js';
import { startDeviceStream } from '../../src/gateway/device-stream.js';
import { startCloud, type Cloud, type RealDevice } from './fixture.js';
import { TEST_STREAM } from './settings.js';
import { freePort } from '../helpers/ports.js';

const EXAMPLE = join(import.meta.dirname, '../../examples/mosquitto');
const MOSQUITTO = ['/usr/sbin/mosquitto', '/usr/bin/mosquitto'].find((path) => existsSync(path));
const CLOUD_PASSWORD = 'cloud-secret';

const waitFor = <T>(check: () => T | Promise<T>) => vi.waitFor(check, { timeout: 5000, interval: 20 });

/** Connects once the broker has read its files again (SIGHUP reloads the password files). */
async function connectWhenAllowed(url: string, options: Parameters<typeof connectAsync>[1]) {
  return vi.waitFor(() => connectAsync(url, { reconnectPeriod: 0, ...options }), { timeout: 5000, interval: 50 });
}

describe.skipIf(!MOSQUITTO)("README's Mosquitto for several nodes (examples/mosquitto)", () => {
  let dir: string;
  let broker: ChildProcess;
  let cloud: Cloud;
  let deviceUrl: string;
  let refusedUrl: string;
  const devices: RealDevice[] = [];

  /** A device registered in the cloud, and given its login on the broker. */
  async function addDevice(): Promise<RealDevice> {
    const device = await cloud.addDevice();
    execFileSync('mosquitto_passwd', ['-b', join(dir, 'devices.passwd'), device.deviceId, device.secret]);
    broker.kill('SIGHUP');
    devices.push(device);
    return device;
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'appliance-cloud-mosquitto-'));
    // Started as root, Mosquitto reads its files as the user `mosquitto`.
    chmodSync(dir, 0o755);
    const [devicePort, cloudPort] = [await freePort(), await freePort()];
    const conf = readFileSync(join(EXAMPLE, 'mosquitto.conf'), 'utf8')
      .replace('listener 1883', `listener ${devicePort} 127.0.0.1`)
      .replace('listener 1884 10.0.0.5', `listener ${cloudPort} 127.0.0.1`)
      .replaceAll('/etc/mosquitto/', `${dir}/`);
    writeFileSync(join(dir, 'mosquitto.conf'), conf);
    for (const acl of ['devices.acl', 'cloud.acl']) copyFileSync(join(EXAMPLE, acl), join(dir, acl));
    execFileSync('mosquitto_passwd', ['-b', '-c', join(dir, 'cloud.passwd'), 'appliance-cloud', CLOUD_PASSWORD]);
    writeFileSync(join(dir, 'devices.passwd'), '');
    broker = spawn(MOSQUITTO!, ['-c', join(dir, 'mosquitto.conf')], { stdio: 'ignore' });
    deviceUrl = `mqtt://127.0.0.1:${devicePort}`;
    const cloudUrl = `mqtt://appliance-cloud:${CLOUD_PASSWORD}@127.0.0.1:${cloudPort}`;
    refusedUrl = `mqtt://appliance-cloud:not-the-password@127.0.0.1:${cloudPort}`;
    await vi.waitFor(async () => (await connectAsync(cloudUrl, { reconnectPeriod: 0 })).endAsync(), { timeout: 10_000, interval: 100 });
    cloud = await startCloud('mosquitto', { controlTimeoutMs: 3000, mosquitto: { cloudUrl, deviceUrl } });
  }, 30_000);

  afterAll(async () => {
    await cloud?.close();
    broker?.kill('SIGTERM');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('carries reports, commands and their results between the cloud and a device', async () => {
    const device = await addDevice();
    const client = await vi.waitFor(() => cloud.connect(device, { reconnectPeriod: 0, onCommand: (command) => ({ ok: true, status: command }) }), { timeout: 5000, interval: 50 });
    await waitFor(async () => expect((await cloud.ctx.devices.state(device.deviceId)).online).toBe(true));
    await client.report({ humidity: { currentHumidity: 47 } });
    await waitFor(async () => expect((await cloud.ctx.devices.state(device.deviceId)).status).toMatchObject({ humidity: { currentHumidity: 47 } }));
    const registered = (await cloud.ctx.store.getDevice(device.deviceId))!;
    const outcome = await cloud.gateway.channel.sendCommand(registered, (await cloud.ctx.devices.state(device.deviceId)).status, { airFlow: { windStrengthLevel: 'LOW' } }, 3000);
    expect(outcome).toMatchObject({ ok: true, status: { airFlow: { windStrengthLevel: 'LOW' } } });
  });

  it("gives a device its own id as client id, whatever it names: it takes over neither another device's session nor the cloud's", async () => {
    const [victim, intruder] = [await addDevice(), await addDevice()];
    const kept = await connectWhenAllowed(deviceUrl, { clientId: victim.deviceId, username: victim.deviceId, password: victim.secret });
    let victimClosed = false;
    kept.on('close', () => (victimClosed = true));

    for (const clientId of [victim.deviceId, `appliance-cloud:${cloud.deployment}:devices`]) {
      const taking = await connectWhenAllowed(deviceUrl, { clientId, username: intruder.deviceId, password: intruder.secret, clean: true });
      // Refused where it names another device's topics: it speaks as itself only.
      await taking.publishAsync(topicOf(victim.deviceId, 'state'), JSON.stringify({ humidity: { currentHumidity: 12 } }), { qos: 1 });
      await taking.endAsync();
    }

    // The victim's connection stands, and the cloud's session still takes what the victim sends.
    await kept.publishAsync(topicOf(victim.deviceId, 'state'), JSON.stringify({ humidity: { currentHumidity: 58 } }), { qos: 1 });
    await waitFor(async () => expect((await cloud.ctx.devices.state(victim.deviceId)).status).toMatchObject({ humidity: { currentHumidity: 58 } }));
    expect(victimClosed).toBe(false);
    await kept.endAsync();
  });

  it('hands the device stream on from a node the broker refuses it to, which says it is not healthy', async () => {
    const device = await addDevice();
    const client = await vi.waitFor(() => cloud.connect(device, { reconnectPeriod: 0 }), { timeout: 5000, interval: 50 });
    // The node that holds the stream stops; one whose stream connection the broker refuses takes its lease.
    await cloud.gateway.close();
    const logger = { debug() {}, info() {}, warn() {}, error() {} };
    const refused = await startDeviceStream({
      url: refusedUrl,
      deployment: cloud.deployment,
      node: 'refused-node',
      leases: cloud.ctx.store,
      bridge: new Bridge({ devices: cloud.ctx.devices, results: cloud.gateway.channel as MqttCommandChannel, logger }),
      reporting: { logger },
      logger,
      ...TEST_STREAM,
    });
    try {
      expect(refused.healthy()).toBe(false);
      // A node that can consume the stream takes it, rather than wait for ever behind the refused one.
      await cloud.addNode();
      await client.report({ humidity: { currentHumidity: 39 } });
      await waitFor(async () => expect((await cloud.ctx.devices.state(device.deviceId)).status).toMatchObject({ humidity: { currentHumidity: 39 } }));
    } finally {
      await refused.close();
    }
  });
});
