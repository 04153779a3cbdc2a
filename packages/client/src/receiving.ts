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
   * How long a message waits for its predecessor before it is handled anyway (default 2000 ms, under
   * the server's 10 s attempt timeout, so the request is answered before the server gives up on it).
   * 0 for a receiver that sees only some of a device's numbers: a service with an `eventCallbackUrl`
   * of its own gets its push messages at one URL and its events at the other, numbered in one
   * sequence, so each URL sees gaps that never fill.
   */
  holdMs?: number;
}

interface Stream {
  /** The highest sequence handled. */
  handled: number;
  /** The handler running now: one message of a stream is handled at a time. */
  running: Promise<void>;
  /** Messages waiting for their predecessor, woken when a handling ends. */
  waiters: Set<() => void>;
}

/**
 * Runs each message's handling in `webhook-sequence` order per service and device. The server sends
 * one device's messages in order, one at a time, so waiting happens only when a receiver gets them
 * out of order: several receiver instances, or a message that failed for good leaving a gap. A
 * message waits for its predecessor at most `holdMs`. Nothing is dropped and nothing counts as
 * handled until its handler succeeds, so the receiver answers 2xx only for what it handled and the
 * server's retry of a failed handling is handled again. A message older than one handled (an
 * operator's resend, a recovery of failed deliveries) is handled at once: `isLate` says so, for a
 * `DEVICE_STATUS` whose report is older than the state already applied.
 */
export class SequenceOrderer {
  readonly #streams = new Map<string, Stream>();
  readonly #holdMs: number;

  constructor(options: SequenceOrdererOptions = {}) {
    this.#holdMs = options.holdMs ?? 2000;
  }

  /** Runs `handle` once the message is in order (or has waited `holdMs`); rejects as `handle` does, counting nothing. */
  async run(message: WebhookMessage, handle: (message: WebhookMessage) => void | Promise<void>): Promise<void> {
    const sequence = message.delivery.sequence;
    if (sequence === null) return handle(message);
    const stream = this.#stream(streamOf(message));
    if (this.#holdMs > 0 && stream.handled !== 0 && sequence > stream.handled + 1) await this.#waitFor(stream, sequence - 1);
    const handled = stream.running.then(() => handle(message));
    stream.running = handled.catch(() => undefined);
    await handled;
    stream.handled = Math.max(stream.handled, sequence);
    for (const wake of stream.waiters) wake();
  }

  /** Whether a later message of the same service and device was handled already. */
  isLate(message: WebhookMessage): boolean {
    const sequence = message.delivery.sequence;
    return sequence !== null && sequence < (this.#streams.get(streamOf(message))?.handled ?? 0);
  }

  #stream(key: string): Stream {
    let stream = this.#streams.get(key);
    if (!stream) {
      stream = { handled: 0, running: Promise.resolve(), waiters: new Set() };
      this.#streams.set(key, stream);
    }
    return stream;
  }

  /** Resolves once `sequence` is handled, or after holdMs. */
  #waitFor(stream: Stream, sequence: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        stream.waiters.delete(check);
        resolve();
      };
      const check = () => {
        if (stream.handled >= sequence) done();
      };
      const timer = setTimeout(done, this.#holdMs);
      stream.waiters.add(check);
    });
  }
}
