/**
 * The embedded broker of a real `serve` process against hostile devices and strangers (DESIGN J): no
 * MQTT input ends the process or changes what is stored, and no packet is buffered past its bound.
 */
import { once } from 'node:events';
import { createConnection } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DeviceClient } from '../../src/device-protocol/device-client.js';
import { topicOf, type TopicKind } from '../../src/device-protocol/topics.js';
import { startServerProcess, type ProcessDevice, type ServerProcess } from './server-process.js';

const MB = 1024 * 1024;

/** MQTT's remaining length: seven bits a byte, least significant first, the top bit saying more follow. */
function remainingLength(length: number): number[] {
  const bytes: number[] = [];
  do {
    let byte = length % 128;
    length = Math.floor(length / 128);
    if (length > 0) byte |= 0x80;
    bytes.push(byte);
  } while (length > 0);
  return bytes;
}

/**
 * A stranger that announces a CONNECT of `announced` bytes and streams up to `streamed` bytes of it
 * as fast as the server takes them; how much it wrote, and whether the server cut it off within `ms`.
 */
async function hugeConnect(port: number, announced: number, streamed: number, ms: number): Promise<{ written: number; cut: boolean }> {
  const socket = createConnection(port, '127.0.0.1');
  // The server's cut reaches the writer as ECONNRESET or EPIPE, then close.
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  const closed = new Promise<true>((resolve) => socket.once('close', () => resolve(true)));
  socket.write(Buffer.from([0x10, ...remainingLength(announced)]));
  const chunk = Buffer.alloc(MB, 0x61);
  let written = 0;
  while (!socket.destroyed && written < streamed) {
    written += chunk.length;
    if (!socket.write(chunk)) await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), closed]);
  }
  const cut = await Promise.race([closed, sleep(ms).then(() => false)]);
  socket.destroy();
  return { written, cut };
}

describe('the embedded broker of a serve process, against hostile input (DESIGN J)', () => {
  let server: ServerProcess;
  let device: ProcessDevice;
  const clients: DeviceClient[] = [];
  const connect = async (options: Partial<Parameters<typeof DeviceClient.connect>[0]> = {}) => {
    const client = await DeviceClient.connect({ url: `mqtt://127.0.0.1:${server.mqttPort}`, deviceId: device.deviceId, secret: device.secret, ...options });
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    server = await startServerProcess({ CONTROL_TIMEOUT_MS: '1500' });
    device = await server.addDevice();
  });

  // One device, one client at a time: two would take its session from each other.
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.mqtt.endAsync(true)));
  });

  afterAll(async () => {
    expect(await server.stop()).toBe(0);
  });

  it('lives through 20,000 levels of nesting on every topic of a device, and stores none of it', async () => {
    const client = await connect();
    await vi.waitFor(async () => expect((await server.snapshot(device.deviceId)).online).toBe(true));
    const before = await server.snapshot(device.deviceId);
    const messages = await server.messageCount();

    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    for (const kind of ['command/result', 'state', 'push', 'connection'] satisfies TopicKind[]) {
      // Each is refused and counted, then acknowledged: the device needs not send it again.
      await client.mqtt.publishAsync(topicOf(device.deviceId, kind), deep, { qos: 1 });
    }

    expect(await server.health()).toBe(200);
    expect(await server.snapshot(device.deviceId)).toEqual(before);
    expect(await server.messageCount()).toBe(messages);
    expect(await server.counter('device_reports_rejected_total')).toBe(4);
  });

  it("lives through a command result whose status the catalog's checks throw on", async () => {
    // `hasOwnProperty` names a resource of no profile; the catalog read it through Object.prototype and threw.
    await connect({ onCommand: () => ({ ok: true, status: { hasOwnProperty: { on: true } } }) });
    await vi.waitFor(async () => expect((await server.snapshot(device.deviceId)).online).toBe(true));

    const res = await server.partner('POST', `/devices/${device.deviceId}`, { airFlow: { windStrengthLevel: 'LOW' } });
    expect(res.body).toMatchObject({ messageId: expect.any(String), timestamp: expect.any(String) });
    expect(await server.health()).toBe(200);
  });

  it("cuts off a stranger's CONNECT announcing 200 MB as its header arrives, and buffers none of it", async () => {
    const rss = server.rss();
    // Four at once: before, each was buffered whole (RSS 409 → 919 MB with four, never given back).
    const strangers = await Promise.all([1, 2, 3, 4].map(() => hugeConnect(server.mqttPort, 200 * MB, 50 * MB, 3000)));
    for (const stranger of strangers) expect(stranger.cut).toBe(true);
    expect(server.rss() - rss).toBeLessThan(10 * MB);
    expect(await server.health()).toBe(200);
  });

  it('disconnects a device that publishes 1 MB, and stores nothing of it', async () => {
    const client = await connect({ reconnectPeriod: 0 });
    await vi.waitFor(async () => expect((await server.snapshot(device.deviceId)).online).toBe(true));
    const before = await server.snapshot(device.deviceId);
    const messages = await server.messageCount();

    const closed = new Promise<void>((resolve) => client.mqtt.once('close', () => resolve()));
    const report = JSON.stringify({ humidity: { currentHumidity: 61 }, padding: 'x'.repeat(MB) });
    client.mqtt.publish(topicOf(device.deviceId, 'state'), report, { qos: 1 });
    await closed;

    // The device is offline now (its will, and its connection gone); nothing else changed.
    await vi.waitFor(async () => expect((await server.snapshot(device.deviceId)).online).toBe(false));
    expect(await server.snapshot(device.deviceId)).toEqual({ ...before, online: false });
    expect(await server.messageCount()).toBe(messages);
  });
});
