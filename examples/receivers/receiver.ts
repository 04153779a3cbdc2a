/** What every receiver example shares: its options and what a started one offers. */
import type { WebhookMessage } from '@appliance-cloud/client';

export interface ReceiverOptions {
  /** The service's webhook secrets: the current one, and the previous one during a rotation. */
  secrets: string[];
  /** Called once per message (a repeat of a webhook-id is acknowledged once the first is handled); when it throws, the delivery answers 500 and its retry calls it again. */
  onMessage: (message: WebhookMessage) => void | Promise<void>;
  port?: number;
}

export interface RunningReceiver {
  /** Where to point the service's callbackUrl: `http://127.0.0.1:<port>/webhooks`. */
  url: string;
  close(): Promise<void>;
}
