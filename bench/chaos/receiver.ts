/**
 * The partner's end of the chaos run: a loopback HTTP server that verifies every delivery with the
 * public `standardwebhooks` package, as a partner's receiver would, and records each one it answers
 * 2xx. A small share is answered 503 on purpose, so that retries happen under the kills too.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { changesOf, type Arrival } from './accounting.js';

export interface Receiver {
  url: string;
  /** Verified requests answered 2xx, in the order they came. */
  arrivals: Arrival[];
  /** Requests no secret of the service verified (answered 400). */
  badSignatures(): number;
  /** Requests answered 503 on purpose. */
  refused(): number;
  /** The service's secret, known once the service exists. */
  trust(secret: string): void;
  close(): Promise<void>;
}

export async function startReceiver(failureRate: number): Promise<Receiver> {
  const arrivals: Arrival[] = [];
  const verifiers: Webhook[] = [];
  let badSignatures = 0;
  let refused = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = flat(request.headers);
      if (!verifiers.some((verifier) => verifies(verifier, body, headers))) {
        badSignatures++;
        return response.writeHead(400).end();
      }
      if (Math.random() < failureRate) {
        refused++;
        return response.writeHead(503).end();
      }
      arrivals.push(arrivalOf(headers, body));
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    arrivals,
    badSignatures: () => badSignatures,
    refused: () => refused,
    trust: (secret) => verifiers.push(new Webhook(secret)),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

interface MessageBody {
  push?: { pushType?: string; deviceId?: string };
  event?: { pushType?: string; deviceId?: string; report?: unknown };
}

function arrivalOf(headers: Record<string, string>, body: string): Arrival {
  const message = JSON.parse(body) as MessageBody;
  const payload = message.event ?? message.push ?? {};
  return {
    webhookId: headers['webhook-id'] ?? '',
    sequence: Number(headers['webhook-sequence']),
    deviceId: String(payload.deviceId),
    pushType: String(payload.pushType),
    changes: changesOf(message.event?.report),
    body,
  };
}

function verifies(verifier: Webhook, body: string, headers: Record<string, string>): boolean {
  try {
    verifier.verify(body, headers);
    return true;
  } catch {
    return false;
  }
}

function flat(headers: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : (value ?? '')]));
}
