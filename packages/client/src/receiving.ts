/**
 * Helpers for a receiver (DESIGN C): a message may come twice with the same `webhook-id` (after a
 * crash mid-attempt, or a resend), and `webhook-sequence` numbers the messages of one device for
 * this service in the order they occurred.
 */
import type { WebhookMessage } from './messages.js';

/** Remembers the webhook ids already handled; in memory, the most recent `capacity` of them. */
export class Deduplicator {
  readonly #seen = new Set<string>();

  constructor(readonly capacity = 10_000) {}

  /** True the first time an id is offered, false for every repeat; the oldest ids are forgotten past `capacity`. */
  firstTime(webhookId: string): boolean {
    if (this.#seen.has(webhookId)) return false;
    this.#seen.add(webhookId);
    // A Set iterates in insertion order: the first entry is the oldest.
    if (this.#seen.size > this.capacity) this.#seen.delete(this.#seen.values().next().value!);
    return true;
  }
}

/** The device a message is about: every message of DESIGN A.8 names one. */
export function deviceIdOf(message: WebhookMessage): string {
  return 'push' in message ? message.push.deviceId : message.event.deviceId;
}

/**
 * Hands messages on in `webhook-sequence` order per device: a message older than one already handed
 * on is dropped, one that comes before its predecessor waits for it. The server sends one device's
 * messages in order, so waiting happens only when a receiver handles deliveries concurrently;
 * `flush()` releases what waits, in order, when a gap will not fill (a restart of the receiver).
 */
export class SequenceOrderer {
  readonly #last = new Map<string, number>();
  readonly #waiting = new Map<string, WebhookMessage[]>();

  /** The messages that are now in order, oldest first: none, this one, or this one and those it unblocked. */
  accept(message: WebhookMessage): WebhookMessage[] {
    const sequence = message.delivery.sequence;
    if (sequence === null) return [message];
    const deviceId = deviceIdOf(message);
    const last = this.#last.get(deviceId);
    if (last !== undefined && sequence <= last) return [];
    if (last !== undefined && sequence > last + 1) {
      const waiting = this.#waiting.get(deviceId) ?? [];
      if (!waiting.some((m) => m.delivery.sequence === sequence)) waiting.push(message);
      this.#waiting.set(deviceId, waiting.sort((a, b) => a.delivery.sequence! - b.delivery.sequence!));
      return [];
    }
    this.#last.set(deviceId, sequence);
    return [message, ...this.#release(deviceId, false)];
  }

  /** How many messages wait for an earlier one. */
  get waiting(): number {
    let count = 0;
    for (const list of this.#waiting.values()) count += list.length;
    return count;
  }

  /** Every waiting message in sequence order per device, skipping the gaps. */
  flush(): WebhookMessage[] {
    return [...this.#waiting.keys()].flatMap((deviceId) => this.#release(deviceId, true));
  }

  #release(deviceId: string, skipGaps: boolean): WebhookMessage[] {
    const waiting = this.#waiting.get(deviceId) ?? [];
    const released: WebhookMessage[] = [];
    while (waiting.length > 0 && (skipGaps || waiting[0]!.delivery.sequence === this.#last.get(deviceId)! + 1)) {
      const next = waiting.shift()!;
      this.#last.set(deviceId, next.delivery.sequence!);
      released.push(next);
    }
    if (waiting.length === 0) this.#waiting.delete(deviceId);
    return released;
  }
}
