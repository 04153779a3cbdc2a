/**
 * The outbox as the admin and the sweeper see it: the messages recorded with each change (DESIGN
 * A.8), their attempts, resending, and retention. How the dispatcher leases them: delivery.ts.
 */
import type { DeliveryAttempt, MessageStatus, OutboxMessage } from '../../core/model.js';

export interface MessageFilter {
  status?: MessageStatus;
  deviceId?: string;
  since?: number;
  /** The messageId of one of the service's messages, the last of the previous page: only those listed after it. */
  before?: string;
  limit?: number;
}

export interface OutboxArea {
  /** A service's messages, newest first: by created_at, then by the order they were recorded in. */
  listMessages(serviceId: string, filter: MessageFilter): Promise<OutboxMessage[]>;
  getMessage(messageId: string): Promise<OutboxMessage | undefined>;
  /** The attempts of the given messages, by message then attempt number. */
  listAttempts(messageIds: string[]): Promise<DeliveryAttempt[]>;
  /** Puts a message back to pending, due now. */
  resendMessage(messageId: string, now: number): Promise<boolean>;
  /** Puts every failed message of the service created since `since` back to pending; returns how many. */
  recoverFailed(serviceId: string, since: number, now: number): Promise<number>;
  /**
   * Deletes up to `limit` delivered or failed messages that closed before `before` (delivered, or
   * failed at their last attempt), the first closed first, with their attempts (DESIGN J,
   * MESSAGE_RETENTION); never an open one, nor one recorded long ago that closed since. Returns how many. Their
   * (service, device) orders keep counting from where they were.
   */
  deleteOldMessages(before: number, limit: number): Promise<number>;
  /**
   * Calls `listener` after each commit that made messages due (recorded, resent, recovered or
   * released) — in this process, and with PostgreSQL in every process. Returns the unsubscribe.
   */
  watchOutbox(listener: () => void): Promise<() => void>;
}
