/** A webhook receiver on Fastify: a JSON parser that hands the route the raw bytes instead of an object. */
import Fastify from 'fastify';
import { Deduplicator, verifyWebhook, WebhookVerificationError } from '@appliance-cloud/client';
import type { ReceiverOptions, RunningReceiver } from './receiver.js';

export async function startFastifyReceiver({ secrets, onMessage, port = 0 }: ReceiverOptions): Promise<RunningReceiver> {
  const seen = new Deduplicator();
  const app = Fastify();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.post<{ Body: Buffer }>('/webhooks', async (request, reply) => {
    try {
      const message = await verifyWebhook(request.headers, request.body, secrets);
      await seen.once(message.delivery.webhookId, () => onMessage(message));
      return reply.code(204).send();
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      return reply.code(400).send(error.message);
    }
  });
  const address = await app.listen({ port, host: '127.0.0.1' });
  return { url: `${address}/webhooks`, close: () => app.close() };
}
