/**
 * Helpers for a receiver (DESIGN C): a message may come twice with the same `webhook-id` (after a
 * crash mid-attempt, or a resend), and `webhook-sequence` numbers the messages of one device for
 * this service in the order they occurred.
 */
import type { WebhookMessage } from './messages.js';

/** Remembers the webhook ids already handled; in memory, the most recent `capacity` of them. */
export class Deduplicator {
  readonly #seen = new Set<string>();
  readonly #handling = new Map<string, Promise<void>>();

  constructor(readonly capacity = 10_000) {}

  /** True the first time an id is offered, false for every repeat; the oldest ids are forgotten past `capacity`. */
  firstTime(webhookId: string): boolean {
    if (this.#seen.has(webhookId)) return false;
    this.#seen.add(webhookId);
    // A Set iterates in insertion order: the first entry is the oldest.
    if (this.#seen.size > this.capacity) this.#seen.delete(this.#seen.values().next().value!);
    return true;
  }

  /** Forgets an id whose handling failed, so that the server's retry of it is handled rather than dropped as a repeat. */
  forget(webhookId: string): void {
    this.#seen.delete(webhookId);
  }

  /**
   * Runs `handle` for the first delivery of an id; a repeat resolves at once if it was handled, and while
   * it is still being handled (the server's retry after its attempt timed out) shares that outcome, so it
   * is not acknowledged before the message is handled. A failure is forgotten: the next retry runs again.
   */
  once(webhookId: string, handle: () => void | Promise<void>): Promise<void> {
    const running = this.#handling.get(webhookId);
    if (running) return running;
    if (!this.firstTime(webhookId)) return Promise.resolve();
    const handled = (async () => handle())().then(
      () => void this.#handling.delete(webhookId),
      (error: unknown) => {
        this.#handling.delete(webhookId);
        this.forget(webhookId);
        throw error;
      },
    );
    this.#handling.set(webhookId, handled);
    return handled;
  }
}

/** The (service, device) a message's sequence counts in: every message of DESIGN A.8 names both. */
function streamOf(message: WebhookMessage): string {
  const { serviceId, deviceId } = 'push' in message ? message.push : message.event;
  return `${serviceId}/${deviceId}`;
}

export interface SequenceOrdererOptions {
  /**
   * Whether a message that comes before its predecessor waits for it (true, the default). False for a
   * receiver that sees only some of a device's numbers: a service with an `eventCallbackUrl` of its
   * own gets its push messages at one URL and its events at the other, numbered in one sequence, so
   * each URL sees gaps that never fill. Then a message is handed on at once unless an equal or later
   * one was already handed on.
   */
  holdGaps?: boolean;
}

/**
 * Hands messages on in `webhook-sequence` order per service and device: a message older than one already handed
 * on is dropped, one that comes before its predecessor waits for it. The server sends one device's
 * messages in order, so waiting happens only when a receiver handles deliveries concurrently;
 * `flush()` releases what waits, in order, when a gap will not fill (a restart of the receiver, a
 * delivery that failed for good).
 */
export class SequenceOrderer {
  readonly #last = new Map<string, number>();
  readonly #waiting = new Map<string, WebhookMessage[]>();
  readonly #holdGaps: boolean;

  constructor(options: SequenceOrdererOptions = {}) {
    this.#holdGaps = options.holdGaps ?? true;
  }

  /** The messages that are now in order, oldest first: none, this one, or this one and those it unblocked. */
  accept(message: WebhookMessage): WebhookMessage[] {
    const sequence = message.delivery.sequence;
    if (sequence === null) return [message];
    const stream = streamOf(message);
    const last = this.#last.get(stream);
    if (last !== undefined && sequence <= last) return [];
    if (this.#holdGaps && last !== undefined && sequence > last + 1) {
      const waiting = this.#waiting.get(stream) ?? [];
      if (!waiting.some((m) => m.delivery.sequence === sequence)) waiting.push(message);
      this.#waiting.set(stream, waiting.sort((a, b) => a.delivery.sequence! - b.delivery.sequence!));
      return [];
    }
    this.#last.set(stream, sequence);
    return [message, ...this.#release(stream, false)];
  }

  /** How many messages wait for an earlier one. */
  get waiting(): number {
    let count = 0;
    for (const list of this.#waiting.values()) count += list.length;
    return count;
  }

  /** Every waiting message in sequence order per service and device, skipping the gaps. */
  flush(): WebhookMessage[] {
    return [...this.#waiting.keys()].flatMap((stream) => this.#release(stream, true));
  }

  #release(stream: string, skipGaps: boolean): WebhookMessage[] {
    const waiting = this.#waiting.get(stream) ?? [];
    const released: WebhookMessage[] = [];
    while (waiting.length > 0 && (skipGaps || waiting[0]!.delivery.sequence === this.#last.get(stream)! + 1)) {
      const next = waiting.shift()!;
      this.#last.set(stream, next.delivery.sequence!);
      released.push(next);
    }
    if (waiting.length === 0) this.#waiting.delete(stream);
    return released;
  }
}
