/** What every receiver example shares: its options and what a started one offers. */
import type { Deduplicator, WebhookMessage } from '@appliance-cloud/client';

export interface ReceiverOptions {
  /** The service's webhook secrets: the current one, and the previous one during a rotation. */
  secrets: string[];
  /** Called once per message (repeats of a webhook-id are acknowledged and dropped); when it throws, the delivery answers 500 and its retry calls it again. */
  onMessage: (message: WebhookMessage) => void | Promise<void>;
  port?: number;
}

export interface RunningReceiver {
  /** Where to point the service's callbackUrl: `http://127.0.0.1:<port>/webhooks`. */
  url: string;
  close(): Promise<void>;
}

/** Hands a message on unless its webhook-id was handled already; one whose handling failed is forgotten, so its retry is handled. */
export async function handleOnce(seen: Deduplicator, message: WebhookMessage, onMessage: ReceiverOptions['onMessage']): Promise<void> {
  if (!seen.firstTime(message.delivery.webhookId)) return;
  try {
    await onMessage(message);
  } catch (error) {
    seen.forget(message.delivery.webhookId);
    throw error;
  }
}
