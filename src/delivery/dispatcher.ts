/**
 * The delivery loop (DESIGN C): claims due deliveries in batches, sends each once under its lease,
 * and records the outcomes in batches. Its I/O comes in as functions (STYLE habit 7), so the same
 * loop runs on any store and tests drive it against real receivers.
 */
import type { Clock } from '../ids.js';
import type { AttemptRecord, ClaimedDelivery, ClaimRequest, RecordedAndClaimed, RecordedStatus } from '../store/areas/delivery.js';
import { attemptRecord, deliveryHeaders, judge } from './attempt.js';
import type { AttemptOutcome } from './sender.js';

export interface DispatcherIo {
  claim(request: ClaimRequest): Promise<ClaimedDelivery[]>;
  /**
   * Records the attempts in one transaction, one status per attempt, in order; then, given `next`,
   * claims with the slots they freed (see DeliveryArea.recordAndClaim).
   */
  record(attempts: AttemptRecord[], now: number, next?: ClaimRequest): Promise<RecordedAndClaimed>;
  /** One HTTP attempt; resolves with its outcome, never rejects. */
  send(url: string, headers: Readonly<Record<string, string>>, body: string): Promise<AttemptOutcome>;
  clock: Clock;
  /** For the retry schedule's jitter. */
  random(): number;
}

export interface DispatcherSettings {
  /** Names this dispatcher's leases. */
  owner: string;
  /** Delays after each failed attempt, in ms. */
  schedule: readonly number[];
  /** Longer than an attempt and its recording take, so that only a crashed holder loses its lease. */
  leaseMs: number;
  /** Most deliveries one claim takes. */
  batchSize: number;
  maxInFlight: number;
  /** Most deliveries in flight to one service, so that a hanging endpoint only ever blocks its own. */
  perEndpointLimit: number;
  /** The fallback poll: for messages written by other processes, and whatever a wake-up missed. */
  pollMs: number;
  /**
   * The least time between two claims: under load, outcomes and new messages gather meanwhile, so
   * that each claim and each record takes a batch instead of one transaction per delivery.
   */
  claimIntervalMs: number;
  /**
   * Once a claim left an endpoint at its limit, the next claim waits up to this long (default 0) for
   * half the endpoint's slots to free, so that it takes a batch rather than the one or two slots
   * each recorded outcome frees: on PostgreSQL each claim is a round trip or three.
   */
  gatherMs?: number;
  /**
   * While more attempts are out than outcomes wait, an outcome waits up to this long (default 0) for
   * others to be recorded with it: each record is a commit (and on PostgreSQL a round trip), and its
   * cost per delivery falls as its batch grows.
   */
  recordGatherMs?: number;
}

export interface DispatcherEvents {
  /** After each attempt is recorded (or found fenced). */
  recorded?(record: AttemptRecord, status: RecordedStatus, serviceId: string): void;
  /**
   * A claim or a record failed; the loop goes on, and unrecorded leases expire into a retry. On
   * PostgreSQL a record's claim is a statement of its own: when it fails, the outcomes stand, unreported.
   */
  failed?(error: unknown, during: 'claim' | 'record'): void;
}

export type DispatcherState = 'idle' | 'running' | 'draining' | 'stopped';

interface Finished {
  record: AttemptRecord;
  serviceId: string;
}

export class Dispatcher {
  #state: DispatcherState = 'idle';
  /** Deliveries claimed and not yet recorded, by serviceId: they hold their endpoint's slots. */
  readonly #inFlight = new Map<string, number>();
  #total = 0;
  readonly #attempts = new Set<Promise<void>>();
  #finished: Finished[] = [];
  /**
   * The chain of claims and record batches: one at a time, so that each claim counts every slot
   * taken before it; each batch takes every outcome that arrived before it.
   */
  #storeWork: Promise<unknown> = Promise.resolve();
  /** The record batch to come: in the next turn of the event loop (`now`), or after recordGatherMs. */
  #recordSoon: { now: boolean; cancel: () => void } | undefined;
  #woken = false;
  #wakeUp: (() => void) | undefined;
  /** The earliest retry this dispatcher scheduled, so that it wakes for it before the next poll. */
  #nextDue = Number.POSITIVE_INFINITY;
  #loop: Promise<void> = Promise.resolve();
  #lastClaim = Number.NEGATIVE_INFINITY;
  /** Whether the last claim left some endpoint at its limit. */
  #congested = false;
  /** Slots freed since the last claim. */
  #freed = 0;
  #stopping: Promise<void> | undefined;

  constructor(
    private readonly io: DispatcherIo,
    private readonly settings: DispatcherSettings,
    private readonly events: DispatcherEvents = {},
  ) {}

  get state(): DispatcherState {
    return this.#state;
  }

  start(): void {
    if (this.#state !== 'idle') throw new Error(`A dispatcher starts once; this one is ${this.#state}`);
    this.#state = 'running';
    this.#loop = this.#run();
  }

  /** Something may be due: claim now rather than at the next poll. */
  wake(): void {
    this.#woken = true;
    this.#wakeUp?.();
  }

  /** Drains: claims nothing more, lets every attempt in flight finish, records them all. */
  stop(): Promise<void> {
    this.#stopping ??= this.#drain();
    return this.#stopping;
  }

  async #drain(): Promise<void> {
    if (this.#state === 'running') this.#state = 'draining';
    this.wake();
    await this.#loop;
    // Until nothing is in flight or waiting to be recorded: a record batch begun before the drain
    // may still be running, and may have claimed along with it; and an outcome that arrives while
    // it runs is chained behind it, so the chain awaited may no longer be the last.
    for (;;) {
      const work = this.#storeWork;
      await work;
      if (work !== this.#storeWork) continue;
      if (this.#attempts.size === 0 && !this.#recordSoon) break;
      await Promise.all(this.#attempts);
      if (this.#recordSoon) {
        this.#recordSoon.cancel();
        this.#recordSoon = undefined;
        void this.#serially(() => this.#recordBatch());
      }
    }
    this.#state = 'stopped';
  }

  async #run(): Promise<void> {
    while (this.#state === 'running') {
      this.#woken = false;
      let full = false;
      if (this.#total < this.#ceiling()) {
        await this.#pace();
        // A drain that began meanwhile claims nothing more.
        if (this.#state !== 'running') break;
        full = await this.#serially(() => this.#claim());
      }
      // A full batch means more may be due at once.
      if (full) continue;
      await this.#idle();
      if (this.#congested) await this.#gather();
    }
  }

  /** Until half an endpoint's slots are free, gatherMs passes, or a drain begins. */
  async #gather(): Promise<void> {
    const until = performance.now() + (this.settings.gatherMs ?? 0);
    while (this.#state === 'running' && this.#freed < this.settings.perEndpointLimit / 2) {
      const left = until - performance.now();
      if (left <= 0) return;
      this.#woken = false;
      await this.#idle(left);
    }
  }

  #serially<T>(work: () => Promise<T>): Promise<T> {
    const done = this.#storeWork.then(work);
    this.#storeWork = done;
    return done;
  }

  /**
   * maxInFlight, and past it a reserve of one endpoint's slots: endpoints that hang can each hold
   * their limit until every slot is theirs, and a service with nothing in flight must still get its
   * messages out (DESIGN C), one attempt at a time until slots free.
   */
  #ceiling(): number {
    return this.settings.maxInFlight + this.settings.perEndpointLimit;
  }

  /** What a claim made now asks for; undefined when there is no room. */
  #claimRequest(): ClaimRequest | undefined {
    const { batchSize, maxInFlight, perEndpointLimit } = this.settings;
    const withinMax = this.#total < maxInFlight;
    const limit = Math.min(batchSize, (withinMax ? maxInFlight : this.#ceiling()) - this.#total);
    if (limit <= 0) return undefined;
    const now = this.io.clock.now();
    if (now >= this.#nextDue) this.#nextDue = Number.POSITIVE_INFINITY;
    return {
      owner: this.settings.owner,
      now,
      leaseMs: this.settings.leaseMs,
      limit,
      // From the reserve, only services with none in flight take one each.
      perEndpointLimit: withinMax ? perEndpointLimit : 1,
      inFlight: Object.fromEntries(this.#inFlight),
    };
  }

  /** Claims what there is room for; whether it took a full batch. */
  async #claim(): Promise<boolean> {
    const request = this.#claimRequest();
    if (!request) return false;
    try {
      const deliveries = await this.io.claim(request);
      this.#claimed(deliveries);
      return deliveries.length === request.limit;
    } catch (error) {
      this.events.failed?.(error, 'claim');
      return false;
    }
  }

  #claimed(deliveries: ClaimedDelivery[]): void {
    for (const delivery of deliveries) this.#begin(delivery);
    this.#freed = 0;
    this.#congested = [...this.#inFlight.values()].some((n) => n >= this.settings.perEndpointLimit);
  }

  /** Waits out what is left of claimIntervalMs since the last claim. */
  async #pace(): Promise<void> {
    const wait = this.#lastClaim + this.settings.claimIntervalMs - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    this.#lastClaim = performance.now();
  }

  /** Until woken, the poll interval (or `most` ms) passes, or the earliest retry falls due. */
  #idle(most = Number.POSITIVE_INFINITY): Promise<void> {
    if (this.#woken) return Promise.resolve();
    const wait = Math.max(0, Math.min(this.settings.pollMs, most, this.#nextDue - this.io.clock.now()));
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#wakeUp = undefined;
        resolve();
      };
      const timer = setTimeout(done, wait);
      this.#wakeUp = done;
    });
  }

  #begin(delivery: ClaimedDelivery): void {
    const { serviceId } = delivery.message;
    this.#inFlight.set(serviceId, (this.#inFlight.get(serviceId) ?? 0) + 1);
    this.#total += 1;
    const attempt = this.#attempt(delivery).finally(() => this.#attempts.delete(attempt));
    this.#attempts.add(attempt);
  }

  async #attempt(delivery: ClaimedDelivery): Promise<void> {
    const { clock, random } = this.io;
    const startedAt = clock.now();
    let outcome: AttemptOutcome;
    try {
      outcome = await this.io.send(delivery.url, deliveryHeaders(delivery, startedAt), delivery.message.body);
    } catch (error) {
      // Sending never rejects; signing does, for a stored secret that is not `whsec_` base64.
      const reason = error instanceof Error ? error.message : String(error);
      outcome = { ok: false, status: null, body: null, durationMs: clock.now() - startedAt, error: reason, gone: false };
    }
    const verdict = judge(outcome, delivery.scheduleAttempt, this.settings.schedule, random, startedAt + outcome.durationMs, delivery.url);
    this.#finished.push({ record: attemptRecord(delivery, outcome, startedAt, verdict), serviceId: delivery.message.serviceId });
    this.#scheduleRecord();
  }

  /**
   * Every outcome that arrives in this turn of the event loop goes into one transaction; while more
   * attempts are still out than outcomes wait, up to recordGatherMs more (few in flight: at once).
   */
  #scheduleRecord(): void {
    const waiting = this.#finished.length;
    const now = waiting >= this.#total - waiting || !this.settings.recordGatherMs;
    if (this.#recordSoon && (this.#recordSoon.now || !now)) return;
    this.#recordSoon?.cancel();
    const record = (): void => {
      this.#recordSoon = undefined;
      void this.#serially(() => this.#recordBatch());
    };
    if (now) {
      const immediate = setImmediate(record);
      this.#recordSoon = { now, cancel: () => clearImmediate(immediate) };
    } else {
      const timer = setTimeout(record, this.settings.recordGatherMs);
      this.#recordSoon = { now, cancel: () => clearTimeout(timer) };
    }
  }

  /**
   * Records a batch and, while running, claims along with it what the freed slots allow: the next
   * message of each device it moved on goes out at once, and the claim costs no commit of its own.
   */
  async #recordBatch(): Promise<void> {
    const batch = this.#finished.splice(0);
    if (batch.length === 0) return;
    for (const { serviceId } of batch) {
      const left = (this.#inFlight.get(serviceId) ?? 1) - 1;
      if (left > 0) this.#inFlight.set(serviceId, left);
      else this.#inFlight.delete(serviceId);
      this.#total -= 1;
      this.#freed += 1;
    }
    const next = this.#state === 'running' ? this.#claimRequest() : undefined;
    let recorded: RecordedAndClaimed = { statuses: [], claimed: [] };
    try {
      recorded = await this.io.record(batch.map((f) => f.record), this.io.clock.now(), next);
    } catch (error) {
      // Unrecorded, the leases expire and the messages go again, with the same webhook-id.
      this.events.failed?.(error, 'record');
    }
    const { statuses, claimed, claimFailed } = recorded;
    if (claimFailed !== undefined) this.events.failed?.(claimFailed, 'claim');
    batch.forEach(({ record, serviceId }, index) => {
      const status = statuses[index];
      if (status === undefined) return;
      if (status === 'pending' && record.verdict.kind === 'retry') this.#nextDue = Math.min(this.#nextDue, record.verdict.nextAttemptAt);
      this.events.recorded?.(record, status, serviceId);
    });
    if (next) this.#claimed(claimed);
    // Slots are free, and the next message of each device may now go: unless the claim above took
    // all it could, the loop claims again only for more than that.
    if (!next || claimed.length === next.limit || statuses.length === 0) this.wake();
  }
}
