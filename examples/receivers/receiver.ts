/** What every receiver example shares: its options and what a started one offers. */
import type { WebhookMessage } from '@appliance-cloud/client';

export interface ReceiverOptions {
  /** The service's webhook secrets: the current one, and the previous one during a rotation. */
  secrets: string[];
  /** Called once per message (repeats of a webhook-id are acknowledged and dropped). */
  onMessage: (message: WebhookMessage) => void | Promise<void>;
  port?: number;
}

export interface RunningReceiver {
  /** Where to point the service's callbackUrl: `http://127.0.0.1:<port>/webhooks`. */
  url: string;
  close(): Promise<void>;
}
