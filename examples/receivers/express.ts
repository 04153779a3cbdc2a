/** A webhook receiver on Express 5: `express.raw` keeps the body as the bytes that were signed. */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Deduplicator, verifyWebhook, WebhookVerificationError } from '@appliance-cloud/client';
import type { ReceiverOptions, RunningReceiver } from './receiver.js';

export async function startExpressReceiver({ secrets, onMessage, port = 0 }: ReceiverOptions): Promise<RunningReceiver> {
  const seen = new Deduplicator();
  const app = express();
  app.post('/webhooks', express.raw({ type: 'application/json' }), async (request, response) => {
    try {
      const message = await verifyWebhook(request.headers, request.body as Buffer, secrets);
      await seen.once(message.delivery.webhookId, () => onMessage(message));
      response.status(204).end();
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      response.status(400).send(error.message);
    }
  });
  const server = await new Promise<ReturnType<typeof app.listen>>((resolve) => {
    const listening = app.listen(port, '127.0.0.1', () => resolve(listening));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
