/**
 * The baseline: a bare `node:http` server in its own process that answers each request with bytes
 * captured from the app for the same method and path. Its rate is the limit of one Node process
 * serving those bytes, which the app's figures are divided by.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CapturedResponse } from './raw.js';

function serve(responses: Record<string, CapturedResponse>): void {
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    // The body is read to its end, as the app must read it before answering.
    request.on('data', () => undefined);
    request.on('end', () => {
      const captured = responses[`${request.method} ${request.url}`];
      if (!captured) {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(captured.status, captured.headers).end(captured.body);
    });
  });
  server.keepAliveTimeout = 72_000;
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
  process.once('disconnect', () => process.exit(0));
}

process.once('message', serve);
