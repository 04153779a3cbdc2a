/**
 * Several nodes on an external broker (DESIGN J): a node killed with SIGKILL and started again loses
 * none of the reports the broker accepted meanwhile. Mosquitto gives a shared subscription's members
 * their turns whether connected or not, so a killed node's session queues its share until the node
 * takes the session up again under its old client id.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { connectAsync } from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import { topicOf } from '../../src/device-protocol/topics.js';
import { randomId } from '../../src/ids.js';
import { MOSQUITTO_URL, mosquittoReachable } from './fixture.js';

const SCRIPT = fileURLToPath(new URL('./external-node.ts', import.meta.url));
const running = new Set<ChildProcessWithoutNullStreams>();

interface Node {
  child: ChildProcessWithoutNullStreams;
  /** `{deviceId} {n}` of every report it took. */
  reports: string[];
}

async function startNode(port: number, sharedGroup: string, settings: Record<string, string> = {}): Promise<Node> {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT], { env: { ...process.env, ...settings, PORT: String(port), MQTT_URL: MOSQUITTO_URL, SHARED_GROUP: sharedGroup } });
  running.add(child);
  child.once('exit', () => running.delete(child));
  const reports: string[] = [];
  let pending = '';
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the node exited with ${code}`)));
    child.stdout.on('data', (chunk: Buffer) => {
      const lines = (pending + chunk.toString()).split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        if (line === 'ready') resolve();
        else if (line.startsWith('report ')) reports.push(line.slice('report '.length));
      }
    });
  });
  return { child, reports };
}

async function kill(node: Node, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  const exited = new Promise((resolve) => node.child.once('exit', resolve));
  node.child.kill(signal);
  await exited;
}

/** Until `count` reports were taken, or 10 s. */
async function taken(nodes: Node[], count: number): Promise<string[]> {
  const all = () => nodes.flatMap((node) => node.reports);
  for (const deadline = Date.now() + 10_000; all().length < count && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 100));
  return all();
}

afterEach(async () => {
  await Promise.all(
    [...running].map((child) => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      return exited;
    }),
  );
});

describe.runIf(await mosquittoReachable())('a node killed and started again on an external broker (DESIGN J)', () => {
  it('gets the reports the broker queued for it while it was down', { timeout: 30_000 }, async () => {
    const group = `restart-${randomId(6)}`;
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const survivor = await startNode(port, group);
    const killed = await startNode(port + 1, group);
    await kill(killed);

    const deviceId = `gw-${randomId(9)}`;
    const device = await connectAsync(MOSQUITTO_URL, { clientId: `restart-${randomId(6)}`, reconnectPeriod: 0 });
    const sent = Array.from({ length: 20 }, (_, n) => `${deviceId} ${n}`);
    for (let n = 0; n < sent.length; n++) await device.publishAsync(topicOf(deviceId, 'state'), JSON.stringify({ n }), { qos: 1 });
    await device.endAsync();

    const restarted = await startNode(port + 1, group);
    expect((await taken([survivor, restarted], sent.length)).sort()).toEqual([...sent].sort());
  });

  it('stopped with SIGTERM, stores what the broker had given it before it goes', { timeout: 30_000 }, async () => {
    const group = `drain-${randomId(6)}`;
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const survivor = await startNode(port, group);
    // Slow to store, so that the broker has queued some of its share when it is told to stop.
    const stopping = await startNode(port + 1, group, { REPORT_DELAY_MS: '20' });

    const deviceId = `gw-${randomId(9)}`;
    const device = await connectAsync(MOSQUITTO_URL, { clientId: `drain-${randomId(6)}`, reconnectPeriod: 0 });
    const sent = Array.from({ length: 100 }, (_, n) => `${deviceId} ${n}`);
    for (let n = 0; n < sent.length; n++) await device.publishAsync(topicOf(deviceId, 'state'), JSON.stringify({ n }), { qos: 1 });
    await device.endAsync();
    await kill(stopping, 'SIGTERM');

    expect((await taken([survivor, stopping], sent.length)).sort()).toEqual([...sent].sort());
    expect(stopping.reports.length).toBeGreaterThan(0);
  });
});
