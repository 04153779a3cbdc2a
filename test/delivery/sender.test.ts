import { setImmediate } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createSender, type Sender, type SenderOptions } from '../../src/delivery/sender.js';
import { signatureHeaders } from '../../src/delivery/sign.js';
import { startHttpServer, startTcpServer, type LoopbackServer } from './loopback.js';

const BODY = JSON.stringify({ messageId: 'AAAAAAAAAAAAAAAAAAAAAA', push: { pushType: 'DEVICE_PUSH' } });
const HEADERS = signatureHeaders({
  messageId: 'AAAAAAAAAAAAAAAAAAAAAA',
  timestamp: 1_700_000_000,
  body: BODY,
  secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

function sender(options: Partial<SenderOptions> = {}): Sender {
  const created = createSender({ phase: 'QA', allowList: [], timeoutMs: 2_000, ...options });
  cleanups.push(() => created.close());
  return created;
}

async function server(...args: Parameters<typeof startHttpServer>): Promise<LoopbackServer> {
  const started = await startHttpServer(...args);
  cleanups.push(() => started.close());
  return started;
}

describe('sender', () => {
  it('POSTs the signed JSON and records a 2xx with its body and latency', async () => {
    const receiver = await server((_request, response) => response.writeHead(202).end('thanks'));
    const outcome = await sender().send(receiver.url, { ...HEADERS }, BODY);

    expect(outcome).toMatchObject({ ok: true, status: 202, body: 'thanks', gone: false });
    expect(outcome.error).toBeUndefined();
    expect(outcome.durationMs).toBeGreaterThan(0);
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]?.body).toBe(BODY);
    expect(receiver.received[0]?.headers).toMatchObject({ ...HEADERS, 'content-type': 'application/json' });
  });

  it('records a 500 as a failure', async () => {
    const receiver = await server((_request, response) => response.writeHead(500).end('oops'));
    expect(await sender().send(receiver.url, {}, BODY)).toMatchObject({ ok: false, status: 500, body: 'oops', gone: false });
  });

  it('does not follow a redirect: a 3xx is a failure and the target is never hit', async () => {
    const target = await server((_request, response) => response.writeHead(200).end());
    const redirecting = await server((_request, response) => response.writeHead(301, { location: target.url }).end());

    expect(await sender().send(redirecting.url, {}, BODY)).toMatchObject({ ok: false, status: 301 });
    expect(target.received).toHaveLength(0);
  });

  it('marks 410 Gone', async () => {
    const receiver = await server((_request, response) => response.writeHead(410).end());
    expect(await sender().send(receiver.url, {}, BODY)).toMatchObject({ ok: false, status: 410, gone: true });
  });

  it('reads Retry-After as seconds or as a date on the injected clock', async () => {
    const seconds = await server((_request, response) => response.writeHead(503, { 'retry-after': '120' }).end());
    expect(await sender().send(seconds.url, {}, BODY)).toMatchObject({ ok: false, status: 503, retryAfterMs: 120_000 });

    const now = Date.UTC(2025, 0, 9, 4, 24, 35);
    const date = new Date(now + 90_000).toUTCString();
    const dated = await server((_request, response) => response.writeHead(429, { 'retry-after': date }).end());
    const outcome = await sender({ clock: { now: () => now } }).send(dated.url, {}, BODY);
    expect(outcome).toMatchObject({ status: 429, retryAfterMs: 90_000 });
  });

  it('gives up on a receiver that never answers after timeoutMs', async () => {
    const receiver = await server(() => undefined);
    const outcome = await sender({ timeoutMs: 200 }).send(receiver.url, {}, BODY);
    expect(outcome).toMatchObject({ ok: false, status: null, body: null, error: 'timed out after 200 ms' });
  });

  it('judges an answer by its status when its body does not finish in time or breaks off: a 2xx is delivered, not sent again', async () => {
    const trickling = await server((_request, response) => {
      response.writeHead(200);
      response.write('partial');
    });
    expect(await sender({ timeoutMs: 200 }).send(trickling.url, {}, BODY)).toMatchObject({ ok: true, status: 200, body: 'partial', gone: false });
    const cut = await server((_request, response) => {
      response.writeHead(410);
      response.write('gone, and');
      setTimeout(() => response.socket?.destroy(), 20);
    });
    expect(await sender({ timeoutMs: 2_000 }).send(cut.url, {}, BODY)).toMatchObject({ ok: false, status: 410, body: 'gone, and', gone: true });
  });

  it('keeps only maxResponseBytes of a huge response body', async () => {
    const chunk = 'x'.repeat(64 * 1024);
    const receiver = await server((_request, response) => {
      response.writeHead(200);
      const writeMore = (left: number): void => {
        if (left === 0) response.end();
        else if (response.write(chunk)) writeMore(left - 1);
        else response.once('drain', () => writeMore(left - 1));
      };
      response.on('error', () => undefined);
      writeMore(16 * 16); // 16 MiB
    });
    const outcome = await sender({ maxResponseBytes: 4096 }).send(receiver.url, {}, BODY);
    expect(outcome).toMatchObject({ ok: true, status: 200, body: 'x'.repeat(4096) });
  });

  it('turns a refused connection into an error outcome', async () => {
    const closed = await startTcpServer();
    await closed.close();
    const outcome = await sender().send(`http://127.0.0.1:${closed.port}/hook`, {}, BODY);
    expect(outcome).toMatchObject({ ok: false, status: null, body: null, gone: false });
    expect(outcome.error).toMatch(/ECONNREFUSED/);
  });

  it('reuses one kept-alive connection for sequential sends', async () => {
    const receiver = await server((_request, response) => response.writeHead(200).end('ok'));
    const reused = sender();
    for (let i = 0; i < 3; i++) {
      expect(await reused.send(receiver.url, {}, BODY)).toMatchObject({ ok: true });
      // undici waits one event-loop turn before reusing a socket; the worker records the attempt meanwhile.
      await setImmediate();
    }
    expect(receiver.received).toHaveLength(3);
    expect(receiver.connections()).toBe(1);
  });

  describe('in phase OP', () => {
    it('never connects to a loopback https URL, by name or by address', async () => {
      const listener = await startTcpServer();
      cleanups.push(() => listener.close());
      const guarded = sender({ phase: 'OP' });

      const byName = await guarded.send(`https://localhost:${listener.port}/hook`, {}, BODY);
      expect(byName).toMatchObject({ ok: false, status: null });
      expect(byName.error).toMatch(/localhost resolves to .*\(loopback\), refused in phase OP/);

      const byAddress = await guarded.send(`https://127.0.0.1:${listener.port}/hook`, {}, BODY);
      expect(byAddress).toMatchObject({ ok: false, status: null, error: '127.0.0.1 is a loopback address, refused in phase OP' });

      const plain = await guarded.send(`http://hooks.example.com:${listener.port}/hook`, {}, BODY);
      expect(plain.error).toBe('phase OP accepts only https: callback URLs');
      expect(listener.connections()).toBe(0);
    });
  });
});
