import { once } from 'node:events';
import { createServer as createHttpServer, request } from 'node:http';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { writeAtTurnEnd, writeResponsesAtTurnEnd } from '../src/socket-writes.js';

const turnEnd = () => new Promise((resolve) => setImmediate(resolve));

const servers: { close(): unknown }[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

/** A TCP server whose accepted socket writes at the turn's end, and a client connected to it. */
async function connectedPair(): Promise<{ server: Socket; client: Socket; received: () => string }> {
  const listener: Server = createServer();
  servers.push(listener);
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  const accepted = once(listener, 'connection') as Promise<[Socket]>;
  const client = connect((listener.address() as AddressInfo).port, '127.0.0.1');
  const [server] = await accepted;
  writeAtTurnEnd(server, true);
  let text = '';
  client.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { server, client, received: () => text };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('writes at the end of the turn', () => {
  it('holds a write until the turn ends, then sends it', async () => {
    const { server, client, received } = await connectedPair();
    server.write('hello');
    // Still the stream's: counted as waiting until the write is done.
    expect(server.writableLength).toBe(5);
    await turnEnd();
    expect(server.writableLength).toBe(0);
    await until(() => received() === 'hello');
    expect(received()).toBe('hello');
    client.destroy();
    server.destroy();
  });

  it('keeps the order of the writes of a turn and of later turns, and ends after them', async () => {
    const { server, client, received } = await connectedPair();
    server.write('a');
    server.write('b');
    server.write('c');
    await turnEnd();
    server.end('d');
    await once(client, 'end');
    expect(received()).toBe('abcd');
    client.destroy();
  });

  it('sends a body larger than the socket takes at once, whole', async () => {
    const { server, client, received } = await connectedPair();
    const body = 'x'.repeat(8 * 1024 * 1024);
    server.end(body);
    await once(client, 'end');
    expect(received().length).toBe(body.length);
    client.destroy();
  });

  it('sends a held write before the socket is destroyed, as a refusal written then closed is', async () => {
    const { server, client, received } = await connectedPair();
    const errors: Error[] = [];
    server.on('error', (error) => errors.push(error));
    server.write('refused');
    server.destroy();
    await once(client, 'close');
    expect(received()).toBe('refused');
    await turnEnd();
    expect(errors).toEqual([]);
  });

  it('holds the answer to a GET, from a connection\'s first request on, and writes any other at once', async () => {
    const held: Record<string, number> = {};
    const http = createHttpServer((req, res) => {
      res.end('answer');
      held[req.method!] = req.socket.writableLength;
    });
    servers.push(http);
    writeResponsesAtTurnEnd(http);
    http.listen(0, '127.0.0.1');
    await once(http, 'listening');
    const port = (http.address() as AddressInfo).port;
    for (const method of ['GET', 'POST']) {
      await new Promise<void>((resolve, reject) => {
        request({ port, host: '127.0.0.1', method, agent: false }, (res) => res.resume().on('end', resolve))
          .on('error', reject)
          .end();
      });
    }
    expect(held.GET).toBeGreaterThan(0);
    expect(held.POST).toBe(0);
  });

  it('answers every request of an HTTP server, each on its own connection', async () => {
    const http = createHttpServer((req, res) => res.end(`answer to ${req.url}`));
    servers.push(http);
    writeResponsesAtTurnEnd(http);
    http.listen(0, '127.0.0.1');
    await once(http, 'listening');
    const port = (http.address() as AddressInfo).port;
    const get = (path: string) =>
      new Promise<string>((resolve, reject) => {
        request({ port, host: '127.0.0.1', path, agent: false }, (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => resolve(text));
        })
          .on('error', reject)
          .end();
      });
    const paths = Array.from({ length: 50 }, (_, i) => `/${i}`);
    expect(await Promise.all(paths.map(get))).toEqual(paths.map((path) => `answer to ${path}`));
  });
});
