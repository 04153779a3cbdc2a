import { hostname } from 'node:os';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newMessageId } from '../src/ids.js';
import { createLog, TurnBatchedStream, type RequestLogFields } from '../src/logging.js';
import { exitCode, startCli, stdoutUntil } from './cli/process.js';

/** A stream that keeps what it is given, one entry per write. */
function capture() {
  const writes: string[] = [];
  return { writes, write: (chunk: string) => writes.push(chunk) > 0, flushSync: () => {} };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

const FIELDS: RequestLogFields = { messageId: 'm-"1"\\', serviceId: 'svc_1', route: 'GET /devices/:deviceId', status: 200, durationMs: 1.234 };

describe('the request line (DESIGN E: one JSON line per request)', () => {
  it('is the line pino writes for the same fields, key for key and in the same order', () => {
    const ours = capture();
    createLog('info', ours).request(FIELDS);
    const theirs = capture();
    pino({ level: 'info' }, theirs).info(FIELDS, 'request');

    const [line, pinoLine] = [JSON.parse(ours.writes[0]!), JSON.parse(theirs.writes[0]!)];
    expect(ours.writes[0]!.endsWith('}\n')).toBe(true);
    expect(Object.keys(line)).toEqual(Object.keys(pinoLine));
    expect({ ...line, time: 0 }).toEqual({ ...pinoLine, time: 0 });
    expect(line).toMatchObject({ level: 30, pid: process.pid, hostname: hostname(), msg: 'request', messageId: 'm-"1"\\' });
  });

  it('leaves out what the request did not have, as pino does', () => {
    const ours = capture();
    createLog('info', ours).request({ ...FIELDS, messageId: undefined, serviceId: undefined });
    expect(JSON.parse(ours.writes[0]!)).not.toHaveProperty('messageId');
    expect(JSON.parse(ours.writes[0]!)).not.toHaveProperty('serviceId');
  });

  it('is not written above info', () => {
    const ours = capture();
    createLog('warn', ours).request(FIELDS);
    expect(ours.writes).toEqual([]);
  });
});

describe('TurnBatchedStream', () => {
  it('writes the lines of one event-loop turn together, in order, at its end', async () => {
    const sink = capture();
    const stream = new TurnBatchedStream(sink);
    stream.write('a\n');
    stream.write('b\n');
    expect(sink.writes).toEqual([]);
    await nextTurn();
    stream.write('c\n');
    await nextTurn();
    expect(sink.writes).toEqual(['a\nb\n', 'c\n']);
  });

  it('flushSync hands over what is pending at once', () => {
    const sink = capture();
    const stream = new TurnBatchedStream(sink);
    stream.write('a\n');
    stream.flushSync();
    expect(sink.writes).toEqual(['a\n']);
  });
});

describe('a server at LOG_LEVEL=info', () => {
  const ADMIN_TOKEN = 'log-test-admin';
  let child: ReturnType<typeof startCli>;
  let base: string;
  let startup: string;

  beforeAll(async () => {
    child = startCli(['serve'], { PORT: '0', HOST: '127.0.0.1', ADMIN_TOKEN, DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'info' });
    // Up to the warning that follows the line saying it listens.
    startup = await stdoutUntil(child, /"listening":"http:\/\/127\.0\.0\.1:\d+"[^\n]*\n[^\n]*"level":40[^\n]*\n/);
    base = /"listening":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(startup)![1]!;
  }, 30_000);

  afterAll(async () => {
    child.kill('SIGTERM');
    await exitCode(child);
  });

  it('warns as it starts that its admin token, shorter than 32 characters, is guessable', () => {
    const warnings = startup.split('\n').filter((l) => l.includes('"level":40')).map((l) => JSON.parse(l) as { msg: string });
    expect(warnings.map((w) => w.msg)).toEqual([expect.stringMatching(/^ADMIN_TOKEN has 14 characters: it alone guards \/admin/)]);
  });

  it('writes one line per request with its messageId, serviceId, route, status and duration', async () => {
    const [first, second] = [newMessageId(), newMessageId()];
    const lines = stdoutUntil(child, new RegExp(`"messageId":"${second}"[^\n]*\n`));
    await fetch(`${base}/devices`, { headers: { 'x-message-id': first } });
    await fetch(`${base}/health`, { headers: { 'x-message-id': second } });
    const logged = (await lines).split('\n').filter((l) => l.includes('"msg":"request"')).map((l) => JSON.parse(l));
    expect(logged).toHaveLength(2);
    expect(logged[0]).toMatchObject({ level: 30, messageId: first, route: 'GET /devices', status: 400 });
    expect(logged[1]).toMatchObject({ messageId: second, route: 'GET /health', status: 200 });
    for (const line of logged) expect(line.durationMs).toBeGreaterThan(0);
  });

  it('names a request without a well-formed x-message-id by the fresh id its answer carries', async () => {
    for (const headers of [{}, { 'x-message-id': 'not-an-id' }] as Record<string, string>[]) {
      const logged = stdoutUntil(child, /"route":"GET \/health"[^\n]*\n/);
      const answered = (await (await fetch(`${base}/health`, { headers })).json()) as { messageId: string };
      const line = JSON.parse((await logged).split('\n').find((l) => l.includes('"msg":"request"'))!) as { messageId: string };
      expect(line.messageId).toBe(answered.messageId);
    }
  });
});
