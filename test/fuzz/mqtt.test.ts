/**
 * Property (DESIGN J): whatever a device publishes, on whichever topic, the server process lives,
 * every publish is answered (acknowledged, or the connection closed) instead of hanging, and what it
 * refuses leaves no trace in the store — no status, version, online flag or outbox message changes.
 *
 * Against a real `serve` process with its embedded broker and real device connections. Every payload
 * is one the contract refuses: too deep, too large, not JSON, not UTF-8, or carrying prototype names
 * among fields that fail the topic's own checks (a report with an impossible humidity, a push code
 * that is a number, an online flag that is a string); command results answer no command.
 */
import fc from 'fast-check';
import { connectAsync } from 'mqtt';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOPIC_KINDS, topicOf, type TopicKind } from '../../src/device-protocol/topics.js';
import { startServerProcess, type ProcessDevice, type ServerProcess } from '../gateway/server-process.js';

const KIB = 1024;
const DEVICE_PUBLISHES = ['state', 'push', 'connection', 'command/result'] as const satisfies readonly TopicKind[];

/** Where a case publishes: relative to the device that publishes and another one, its victim. */
type Target =
  | { to: 'own'; kind: (typeof DEVICE_PUBLISHES)[number] }
  | { to: 'own-other'; suffix: string }
  | { to: 'victim'; kind: TopicKind }
  | { to: 'foreign'; topic: string };

interface Case {
  target: Target;
  payload: Buffer;
  /** What the payload is, for a failing case's report. */
  what: string;
}

const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString', 'valueOf', 'isPrototypeOf', '__defineGetter__'];

/** Fields that make each topic's message fail its own checks; last, so that they win over any earlier duplicate. */
const REFUSED_BY_CONTRACT = '"humidity":{"currentHumidity":"wet"},"pushCode":12,"online":"maybe"';

const key = fc.oneof(
  fc.constantFrom(...PROTOTYPE_NAMES),
  fc.constantFrom('humidity', 'airFlow', 'currentHumidity', 'windStrengthLevel', 'pushCode', 'online', 'commandId', 'ok', 'status', 'location'),
  fc.string({ maxLength: 12 }),
);

/** JSON text of a value with prototype names among its keys, a few levels deep. */
const { value: jsonText } = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), fc.string({ maxLength: 20 })).map((v) => JSON.stringify(v)),
    fc.array(tie('value'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
    fc.array(fc.tuple(key, tie('value')), { maxLength: 5 }).map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
  ),
}));

const refusedObject = (inner: string) => `{${inner}${inner ? ',' : ''}${REFUSED_BY_CONTRACT}}`;

const payload: fc.Arbitrary<{ payload: Buffer; what: string }> = fc.oneof(
  // Prototype names anywhere, around fields the topic refuses.
  fc.array(fc.tuple(key, jsonText), { maxLength: 6 }).map((entries) => {
    const text = refusedObject(entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(','));
    return { payload: Buffer.from(text), what: `prototype names: ${text.slice(0, 200)}` };
  }),
  // Deeper than 64 levels, up to 20,000 (past 64 KiB the connection is cut instead).
  fc.record({ depth: fc.integer({ min: 65, max: 20_000 }), object: fc.boolean() }).map(({ depth, object }) => ({
    payload: Buffer.from(object ? '{"a":'.repeat(depth) + '1' + '}'.repeat(depth) : '['.repeat(depth) + ']'.repeat(depth)),
    what: `${depth} levels of ${object ? 'objects' : 'arrays'}`,
  })),
  // Thousands of keys.
  fc.integer({ min: 1000, max: 8000 }).map((keys) => {
    const inner = Array.from({ length: keys }, (_, i) => `"k${i}":${i}`).join(',');
    return { payload: Buffer.from(refusedObject(inner)), what: `${keys} keys` };
  }),
  // Over the payload bound, some over the packet bound.
  fc.integer({ min: 64 * KIB + 1, max: 300 * KIB }).map((size) => ({ payload: Buffer.from(`{"padding":"${'x'.repeat(size)}"}`), what: `${size} bytes` })),
  // Not UTF-8, in a key or a value of what would otherwise be a report with an undeclared property.
  fc
    .record({
      bad: fc.constantFrom([0xff], [0xfe], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0x80], [0xe2, 0x82], [0xf8, 0x88, 0x80, 0x80, 0x80]),
      inKey: fc.boolean(),
    })
    .map(({ bad, inKey }) => {
      const bytes = Buffer.from(bad);
      const parts = inKey ? [Buffer.from('{"x'), bytes, Buffer.from('":{"on":true}}')] : [Buffer.from('{"x":{"on":"'), bytes, Buffer.from('"}}')];
      return { payload: Buffer.concat(parts), what: `invalid UTF-8 ${bytes.toString('hex')} in a ${inKey ? 'key' : 'value'}` };
    }),
  // Not JSON: a control character first, then anything.
  fc.tuple(fc.integer({ min: 1, max: 8 }), fc.uint8Array({ maxLength: 300 })).map(([first, rest]) => ({ payload: Buffer.from([first, ...rest]), what: 'not JSON' })),
  fc.constantFrom('{"humidity":', '{"online":true', 'true', '"online"', '[{"online":true}]', 'null', '{}x').map((text) => ({ payload: Buffer.from(text), what: text })),
);

const target: fc.Arbitrary<Target> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...DEVICE_PUBLISHES).map((kind) => ({ to: 'own' as const, kind })) },
  fc.constantFrom('command', 'status', 'state/x', 'command/result/x', 'x', '', 'connection/').map((suffix) => ({ to: 'own-other' as const, suffix })),
  fc.constantFrom(...TOPIC_KINDS).map((kind) => ({ to: 'victim' as const, kind })),
  fc.constantFrom('$SYS/broker', 'appliance', 'appliance/', 'other/state', 'appliance/+/state', 'appliance/#').map((topic) => ({ to: 'foreign' as const, topic })),
);

/** A publish is answered: acknowledged, or the connection closed (a refusal, in MQTT 3.1.1). Anything else is a stall. */
type Answer = 'acknowledged' | 'closed' | 'not sent' | 'no answer';

describe('random hostile publishes on every device topic (DESIGN J)', () => {
  let server: ServerProcess;
  let device: ProcessDevice;
  let victim: ProcessDevice;

  beforeAll(async () => {
    server = await startServerProcess();
    [device, victim] = [await server.addDevice(), await server.addDevice()];
  });

  afterAll(async () => {
    expect(await server.stop()).toBe(0);
  });

  function topicFor(t: Target): string {
    if (t.to === 'own') return topicOf(device.deviceId, t.kind);
    if (t.to === 'own-other') return `appliance/${device.deviceId}/${t.suffix}`;
    if (t.to === 'victim') return topicOf(victim.deviceId, t.kind);
    return t.topic;
  }

  /** One connection of the device's, one QoS 1 publish; the connection must be accepted whatever came before. */
  async function publish(topic: string, message: Buffer): Promise<Answer> {
    const client = await connectAsync(`mqtt://127.0.0.1:${server.mqttPort}`, {
      clientId: device.deviceId,
      username: device.deviceId,
      password: device.secret,
      reconnectPeriod: 0,
      protocolVersion: 4,
    });
    client.on('error', () => undefined);
    const answer = await Promise.race([
      client.publishAsync(topic, message, { qos: 1 }).then(
        (): Answer => 'acknowledged',
        (): Answer => 'not sent',
      ),
      new Promise<Answer>((resolve) => client.once('close', () => resolve('closed'))),
      sleep(5000).then((): Answer => 'no answer'),
    ]);
    await client.endAsync(true);
    return answer;
  }

  /** Everything a device's publish could change. */
  const fingerprint = async () => JSON.stringify([await server.snapshot(device.deviceId), await server.snapshot(victim.deviceId), await server.messageCount()]);

  it('lives, answers every publish and changes nothing', { timeout: 60_000 }, async () => {
    const before = await fingerprint();
    const example = (t: Target, text: string | Buffer, what: string): [Case] => [{ target: t, payload: Buffer.from(text), what }];
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    await fc.assert(
      fc.asyncProperty(fc.record({ target, payload }).map(({ target: t, payload: p }): Case => ({ target: t, ...p })), async (c) => {
        const answer = await publish(topicFor(c.target), c.payload);
        expect(answer, c.what).not.toBe('no answer');
        expect(await server.health(), c.what).toBe(200);
        expect(await fingerprint(), c.what).toBe(before);
      }),
      {
        numRuns: 120,
        endOnFailure: true,
        examples: [
          ...DEVICE_PUBLISHES.map((kind) => example({ to: 'own', kind }, deep, `20,000 levels on ${kind}`)),
          // The catalog read `hasOwnProperty` through Object.prototype and threw (another branch fixes it).
          example({ to: 'own', kind: 'state' }, refusedObject('"hasOwnProperty":{"a":1}'), 'hasOwnProperty as a resource'),
          example({ to: 'own', kind: 'state' }, Buffer.concat([Buffer.from('{"x'), Buffer.from([0xff]), Buffer.from('":{"on":true}}')]), 'invalid UTF-8 in a key'),
          example({ to: 'own', kind: 'state' }, `{"padding":"${'x'.repeat(1024 * KIB)}"}`, '1 MiB'),
          example({ to: 'victim', kind: 'state' }, '{"humidity":{"currentHumidity":50}}', "a valid report on another device's topic"),
        ],
      },
    );
    expect(await server.counter('device_reports_rejected_total')).toBeGreaterThan(0);
  });
});
