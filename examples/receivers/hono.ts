/** A webhook receiver on Hono: the Fetch API's request gives the raw text; runs on Node here, on edges alike. */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { Deduplicator, verifyWebhook, WebhookVerificationError } from '@appliance-cloud/client';
import type { ReceiverOptions, RunningReceiver } from './receiver.js';

export async function startHonoReceiver({ secrets, onMessage, port = 0 }: ReceiverOptions): Promise<RunningReceiver> {
  const seen = new Deduplicator();
  const app = new Hono();
  app.post('/webhooks', async (c) => {
    try {
      const message = await verifyWebhook(c.req.raw.headers, await c.req.text(), secrets);
      await seen.once(message.delivery.webhookId, () => onMessage(message));
      return c.body(null, 204);
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      return c.text(error.message, 400);
    }
  });
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const listening = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, () => resolve(listening));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    close: () => new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
