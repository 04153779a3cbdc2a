/**
 * The receiver of `appliance-cloud listen`: an HTTP server on loopback that takes each webhook,
 * verifies its signature with the service's secret, and forwards it unchanged (headers and raw body)
 * to the developer's own endpoint when there is one, answering with that endpoint's status so that
 * a failure there is retried as it would be in production.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verify } from '../delivery/sign.js';
import { systemClock } from '../ids.js';
import type { DeliverySummary } from './describe.js';

export interface ReceiverOptions {
  /** The service's webhook secrets, current first. */
  secrets: readonly string[];
  forwardTo?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  onDelivery(summary: DeliverySummary): void;
}

export interface Receiver {
  url: string;
  close(): Promise<void>;
}

/** Headers that belong to one connection, not to the message: the forward sets its own. */
const HOP_BY_HOP = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive']);

function forwardedHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!HOP_BY_HOP.has(name) && value !== undefined) kept[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return kept;
}

/** The status the forward target answered, or why it could not be reached. */
async function forward(url: string, headers: IncomingHttpHeaders, body: Buffer): Promise<number | string> {
  try {
    const response = await fetch(url, { method: 'POST', headers: forwardedHeaders(headers), body });
    await response.arrayBuffer();
    return response.status;
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    return cause?.code ?? (error instanceof Error ? error.message : String(error));
  }
}

/** A delivery's body is one message of DESIGN A.8: a device's status is at most 32 KiB (J). */
const BODY_LIMIT = 256 * 1024;

export async function startReceiver(options: ReceiverOptions): Promise<Receiver> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      // What the cloud sends is far smaller; anything else on this port is not buffered past the bound.
      if (size > BODY_LIMIT) {
        response.writeHead(413, { connection: 'close' }).end();
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      void (async () => {
        const raw = Buffer.concat(chunks);
        const body = raw.toString('utf8');
        const check = verify({ body, headers: request.headers, secrets: options.secrets, clock: systemClock });
        const forwarded = options.forwardTo === undefined ? undefined : await forward(options.forwardTo, request.headers, raw);
        options.onDelivery({ body, verified: check.ok, ...(check.ok ? {} : { reason: check.reason }), ...(forwarded === undefined ? {} : { forwarded }) });
        // With no forward, or a forward that got no answer, the cloud hears 200 or 502 as from any receiver.
        response.writeHead(typeof forwarded === 'number' ? forwarded : forwarded === undefined ? 200 : 502).end();
      })().catch(() => {
        // Whatever a body holds, the receiver stays up: the cloud hears a 500 and sends it again.
        if (!response.headersSent) response.writeHead(500);
        response.end();
      });
    });
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
