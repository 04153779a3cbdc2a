/**
 * Delivery (DESIGN C): what the dispatcher needs from the outbox. Every call is one transaction, so
 * several dispatchers (processes, with PostgreSQL) can share one outbox. Order is per (service,
 * device): a message is claimed only when no earlier one of its service and device is pending,
 * delivering or held. A service's messages are held while the service is disabled, its endpoint is
 * disabled, or it has no URL for the message's kind.
 */
import type { MessageStatus, OutboxMessage } from '../../core/model.js';

/** What a claim asks for. */
export interface ClaimRequest {
  /** Who holds the leases: names a dispatcher, for the admin and the logs. */
  owner: string;
  now: number;
  /** A lease not settled by `now + leaseMs` returns to pending with a new fencing token. */
  leaseMs: number;
  /** At most this many deliveries in all. */
  limit: number;
  /** At most this many deliveries in flight per service, counting `inFlight`. */
  perEndpointLimit: number;
  /** Deliveries the caller already holds, by serviceId. */
  inFlight: Readonly<Record<string, number>>;
}

/** A message leased for one attempt, with everything the attempt needs. */
export interface ClaimedDelivery {
  /** Its status is `delivering`. */
  message: OutboxMessage;
  /** Proves the lease: an outcome carrying an older token is ignored. */
  fencingToken: number;
  /** Which step of the retry schedule this attempt is, from 1; resend, recover and release start it over. */
  scheduleAttempt: number;
  /** The callbackUrl for a push, the eventCallbackUrl (default callbackUrl) for an event. */
  url: string;
  /** Every webhook secret valid at claim time, newest first: both during a rotation. */
  secrets: string[];
}

/** What became of one attempt, as the dispatcher judged it. */
export type AttemptVerdict =
  | { kind: 'delivered' }
  | { kind: 'retry'; nextAttemptAt: number }
  /** The retry schedule is exhausted: the message is failed, and kept. */
  | { kind: 'exhausted' }
  /**
   * 410 Gone: the endpoint at `url` asks to be disabled. It speaks for that URL alone: when the
   * service points elsewhere by the time it is recorded, the message goes again, at once, to the new one.
   */
  | { kind: 'gone'; url: string };

/** One finished attempt to record under the lease it was made with. */
export interface AttemptRecord {
  messageId: string;
  fencingToken: number;
  startedAt: number;
  durationMs: number;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
  verdict: AttemptVerdict;
}

/** The message's status after its attempt was recorded, or `fenced` when its lease had been lost. */
export type RecordedStatus = Exclude<MessageStatus, 'delivering'> | 'fenced';

export interface RecordedAndClaimed {
  statuses: RecordedStatus[];
  claimed: ClaimedDelivery[];
  /**
   * Why the claim failed after the outcomes were committed (PostgreSQL): `statuses` stand, and
   * `claimed` holds what was leased with them, to send now rather than after their lease runs out.
   */
  claimFailed?: unknown;
}

/** Why deliveries to a service stopped until an admin enables them again. */
export type EndpointDisabledReason = 'gone' | 'failing';

export interface EndpointHealth {
  serviceId: string;
  /** Since the first failure after the last success; null while the last attempt succeeded. */
  failingSince: number | null;
  disabledAt: number | null;
  disabledReason: EndpointDisabledReason | null;
}

export interface OutboxStats {
  pending: number;
  delivering: number;
  held: number;
  /** createdAt of the oldest pending or delivering message; null when there is none. */
  oldestPendingAt: number | null;
}

export interface DeliveryArea {
  /**
   * Returns expired leases to pending, holds what cannot be delivered, then leases due messages
   * that are first in their order, oldest due first, within the limits.
   */
  claimDeliveries(request: ClaimRequest): Promise<ClaimedDelivery[]>;
  /**
   * Records attempts in one transaction, each only if its lease still holds. A success clears the
   * endpoint's failing time; a failure starts it, and one at least `disableAfterFailingMs` after it
   * disables the endpoint, as `gone` does; a disabled endpoint's messages are held.
   */
  recordAttempts(attempts: AttemptRecord[], now: number, disableAfterFailingMs: number): Promise<RecordedStatus[]>;
  /**
   * Records attempts as recordAttempts does, then claims as claimDeliveries does, with the slots
   * those outcomes freed (`claim.inFlight` no longer counts them): the queues they moved on are
   * claimed at once. SQLite commits both in one transaction; PostgreSQL leases the next message of
   * each queue moved on in the record's statement, then claims with the room left.
   */
  recordAndClaim(attempts: AttemptRecord[], now: number, disableAfterFailingMs: number, claim: ClaimRequest): Promise<RecordedAndClaimed>;
  /** A service's endpoint health (healthy when nothing was recorded); undefined for an unknown service. */
  getEndpointHealth(serviceId: string): Promise<EndpointHealth | undefined>;
  /**
   * Puts held messages back to pending, due now, with their retry schedule started over, where
   * delivery is possible again (of every service, or of `serviceId`); returns how many.
   */
  releaseHeld(now: number, serviceId?: string): Promise<number>;
  outboxStats(): Promise<OutboxStats>;
}
