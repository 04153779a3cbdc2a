/**
 * Several nodes on an external broker (DESIGN B, J): what devices send is consumed by one node at a
 * time, on the deployment's one session. A node killed with SIGKILL, stopped with SIGTERM, or killed
 * and started again alone, loses none of the reports the broker accepted, and every report of a
 * device is taken after the ones sent before it.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectAsync } from 'mqtt';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { topicOf } from '../../src/device-protocol/topics.js';
import { randomId } from '../../src/ids.js';
import { mosquittoReachable } from './fixture.js';
import { MOSQUITTO_URL } from './settings.js';

const SCRIPT = fileURLToPath(new URL('./external-node.ts', import.meta.url));
const running = new Set<ChildProcessWithoutNullStreams>();
const dir = mkdtempSync(join(tmpdir(), 'node-restart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Node {
  child: ChildProcessWithoutNullStreams;
  /** `{deviceId} {n}` of every report it took, in the order taken. */
  reports: string[];
  /** Whether it consumes the device stream (it said so). */
  holding: boolean;
}

/** A deployment of nodes on one store (a SQLite file they share) and one broker. */
function deployment() {
  const env = { MQTT_URL: MOSQUITTO_URL, DEPLOYMENT: `restart-${randomId(6)}`, DATABASE_URL: `sqlite:${join(dir, `${randomId(6)}.db`)}` };
  return async (settings: Record<string, string> = {}): Promise<Node> => {
    const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT], { env: { ...process.env, ...env, ...settings } });
    running.add(child);
    child.once('exit', () => running.delete(child));
    const node: Node = { child, reports: [], holding: false };
    let pending = '';
    await new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`the node exited with ${code}`)));
      child.stdout.on('data', (chunk: Buffer) => {
        const lines = (pending + chunk.toString()).split('\n');
        pending = lines.pop()!;
        for (const line of lines) {
          if (line === 'ready') resolve();
          else if (line === 'holding') node.holding = true;
          else if (line.startsWith('report ')) node.reports.push(line.slice('report '.length));
        }
      });
    });
    return node;
  };
}

async function stop(node: Node, signal: NodeJS.Signals): Promise<void> {
  const exited = new Promise((resolve) => node.child.once('exit', resolve));
  node.child.kill(signal);
  await exited;
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 15_000; !check(); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Publishes `count` reports of a new device at QoS 1, one after another; returns them as the nodes print them. */
async function publish(count: number, onSent?: (n: number) => Promise<void>): Promise<string[]> {
  const deviceId = `gw-${randomId(9)}`;
  const device = await connectAsync(MOSQUITTO_URL, { clientId: `restart-${randomId(6)}`, reconnectPeriod: 0 });
  const sent: string[] = [];
  for (let n = 0; n < count; n++) {
    await device.publishAsync(topicOf(deviceId, 'state'), JSON.stringify({ n }), { qos: 1 });
    sent.push(`${deviceId} ${n}`);
    await onSent?.(n);
  }
  await device.endAsync();
  return sent;
}

/**
 * What the node took of the device that sent `sent`. The broker is shared: another test file's
 * devices report through the same topics, and a node takes them too.
 */
function takenOf(node: Node, sent: string[]): string[] {
  const device = `${sent[0]!.split(' ')[0]} `;
  return node.reports.filter((report) => report.startsWith(device));
}

/** What the nodes took of that device, one after the other, with a report taken again right after a kill counted once. */
function takenInTurn(nodes: Node[], sent: string[]): string[] {
  return nodes.flatMap((node) => takenOf(node, sent)).filter((report, i, all) => report !== all[i - 1]);
}

afterEach(async () => {
  await Promise.all([...running].map((child) => stop({ child, reports: [], holding: false }, 'SIGTERM')));
});

describe.runIf(await mosquittoReachable())('nodes of one deployment on an external broker (DESIGN B, J)', () => {
  it('the only node, killed and started again, gets in order the reports the broker kept meanwhile', { timeout: 30_000 }, async () => {
    const start = deployment();
    const killed = await start();
    await until(() => killed.holding, 'the node consumes');
    await stop(killed, 'SIGKILL');

    const sent = await publish(20);
    const restarted = await start();
    await until(() => takenOf(restarted, sent).length >= sent.length, 'every report is taken');
    expect(takenOf(restarted, sent)).toEqual(sent);
  });

  it('when the node consuming is killed, the next takes over where it stopped, in order', { timeout: 30_000 }, async () => {
    const start = deployment();
    const first = await start({ REPORT_DELAY_MS: '5' });
    await until(() => first.holding, 'the first node consumes');
    const second = await start({ REPORT_DELAY_MS: '5' });
    expect(second.holding).toBe(false);

    // Killed once it has taken some, wherever it is then: after 40 sends alone, a slow start took none.
    const sent = await publish(100, async (n) => {
      if (n !== 40) return;
      await until(() => first.reports.length > 0, 'the first node takes reports');
      await stop(first, 'SIGKILL');
    });
    await until(() => takenInTurn([first, second], sent).length >= sent.length, 'every report is taken');
    expect(takenOf(first, sent).length).toBeGreaterThan(0);
    expect(second.holding).toBe(true);
    expect(takenInTurn([first, second], sent)).toEqual(sent);
  });

  it('when the node consuming stops with SIGTERM, it stores what it took and the next goes on from there', { timeout: 30_000 }, async () => {
    const start = deployment();
    const stopping = await start({ REPORT_DELAY_MS: '20' });
    await until(() => stopping.holding, 'the first node consumes');
    const next = await start();

    const sent = await publish(60, async (n) => {
      if (n === 20) await stop(stopping, 'SIGTERM');
    });
    const taken = (node: Node) => takenOf(node, sent);
    await until(() => taken(stopping).length + taken(next).length >= sent.length, 'every report is taken');
    expect(taken(stopping).length).toBeGreaterThan(0);
    // Nothing taken twice: the stopping node acknowledged all it took.
    expect([...taken(stopping), ...taken(next)]).toEqual(sent);
  });
});
