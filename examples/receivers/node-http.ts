/** A webhook receiver on bare `node:http`: read the raw body, verify, acknowledge with 204. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Deduplicator, verifyWebhook, WebhookVerificationError } from '@appliance-cloud/client';
import type { ReceiverOptions, RunningReceiver } from './receiver.js';

export async function startNodeHttpReceiver({ secrets, onMessage, port = 0 }: ReceiverOptions): Promise<RunningReceiver> {
  const seen = new Deduplicator();
  const server = createServer(async (request, response) => {
    if (request.method !== 'POST' || request.url !== '/webhooks') return void response.writeHead(404).end();
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    try {
      const message = await verifyWebhook(request.headers, Buffer.concat(chunks), secrets);
      await seen.once(message.delivery.webhookId, () => onMessage(message));
      response.writeHead(204).end();
    } catch (error) {
      // A listener of node:http that throws would end the process: a failed handler answers 500, and the server retries.
      if (!(error instanceof WebhookVerificationError)) return void response.writeHead(500).end();
      response.writeHead(400).end(error.message);
    }
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
