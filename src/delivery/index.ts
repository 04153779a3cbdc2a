/** startDelivery: the dispatcher over a store, with its HTTP sender, metrics and sweeper (DESIGN C, E). */
import { hostname } from 'node:os';
import type { Registry } from 'prom-client';
import { ConfigError, type Config } from '../config.js';
import { randomId, type Clock } from '../ids.js';
import { createDeliveryMetrics, serviceLabeller } from '../metrics.js';
import type { AttemptRecord } from '../store/areas/delivery.js';
import type { Store } from '../store/store.js';
import { Dispatcher, type DispatcherEvents } from './dispatcher.js';
import { parseRetention, RETENTION_BATCH, sweepInBatches, sweepOldMessages } from './retention.js';
import { parseRetrySchedule } from './schedule.js';
import { createSender } from './sender.js';
import { startSweeper } from './sweeper.js';

export interface DeliveryTuning {
  /** Most deliveries one claim takes. */
  batchSize: number;
  maxInFlight: number;
  /** Most attempts in flight to one service. */
  perEndpointLimit: number;
  /** The fallback poll, for writes the in-process wake-up cannot see. */
  pollMs: number;
  /** The least time between two claims, so that a busy dispatcher claims and records in batches. */
  claimIntervalMs: number;
  /** How long a claim waits for an endpoint at its limit to free half its slots. */
  gatherMs: number;
  /** How long an outcome waits for others to be recorded with it while most attempts are still out. */
  recordGatherMs: number;
  /** How often held messages are released where delivery is possible again, expired event subscriptions and old messages removed. */
  sweepMs: number;
  /** Old messages deleted per statement (MESSAGE_RETENTION). */
  retentionBatch: number;
  /** DESIGN C: an endpoint that did nothing but fail for five days is disabled. */
  disableAfterFailingMs: number;
}

export const DEFAULT_TUNING: Readonly<DeliveryTuning> = {
  batchSize: 100,
  maxInFlight: 512,
  perEndpointLimit: 64,
  pollMs: 1_000,
  claimIntervalMs: 1,
  gatherMs: 5,
  recordGatherMs: 1,
  sweepMs: 10_000,
  retentionBatch: RETENTION_BATCH,
  disableAfterFailingMs: 5 * 24 * 3_600_000,
};

/** The logger calls delivery makes (pino's satisfy them). */
export interface DeliveryLog {
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface DeliveryDeps {
  store: Store;
  clock: Clock;
  config: Pick<Config, 'phase' | 'deliveryRetrySchedule' | 'deliveryAttemptTimeoutMs' | 'deliveryAllowList' | 'messageRetention'>;
  /** The app's metrics registry, to add the delivery metrics to; none when omitted. */
  registry?: Registry;
  log?: DeliveryLog;
  tuning?: Partial<DeliveryTuning>;
  /** For the retry schedule's jitter. */
  random?: () => number;
}

export interface Delivery {
  /** Claim now rather than at the next poll. */
  wake(): void;
  /** Drains (DESIGN E): claims nothing more, finishes and records the attempts in flight, closes the connections. */
  stop(): Promise<void>;
}

/** Starts delivering the store's outbox; rejects at once (a ConfigError) on a malformed retry schedule, allow-list or retention. */
export async function startDelivery(deps: DeliveryDeps): Promise<Delivery> {
  const { store, clock, config, log } = deps;
  const tuning = { ...DEFAULT_TUNING, ...deps.tuning };
  const schedule = setting('DELIVERY_RETRY_SCHEDULE', () => parseRetrySchedule(config.deliveryRetrySchedule));
  const retentionMs = setting('MESSAGE_RETENTION', () => parseRetention(config.messageRetention));
  const sender = setting('DELIVERY_ALLOW_LIST', () =>
    createSender({
      phase: config.phase,
      allowList: config.deliveryAllowList,
      timeoutMs: config.deliveryAttemptTimeoutMs,
      // The per-endpoint limit bounds each service's sockets; a shared pool limit would let services on one host block each other,
      // so it is as high as the dispatcher ever goes: maxInFlight and its reserve of one endpoint's slots.
      connectionsPerOrigin: tuning.maxInFlight + tuning.perEndpointLimit,
      clock,
    }),
  );
  const dispatcher = new Dispatcher(
    {
      claim: (request) => store.claimDeliveries(request),
      record: async (attempts, now, next) =>
        next
          ? store.recordAndClaim(attempts, now, tuning.disableAfterFailingMs, next)
          : { statuses: await store.recordAttempts(attempts, now, tuning.disableAfterFailingMs), claimed: [] },
      send: (url, headers, body) => sender.send(url, headers, body),
      clock,
      random: deps.random ?? Math.random,
    },
    {
      owner: `${hostname()}/${process.pid}/${randomId(6)}`,
      schedule,
      // An attempt ends within its timeout, and is recorded moments later; past this its holder is presumed dead.
      leaseMs: 2 * config.deliveryAttemptTimeoutMs + 5_000,
      batchSize: tuning.batchSize,
      maxInFlight: tuning.maxInFlight,
      perEndpointLimit: tuning.perEndpointLimit,
      pollMs: tuning.pollMs,
      claimIntervalMs: tuning.claimIntervalMs,
      gatherMs: tuning.gatherMs,
      recordGatherMs: tuning.recordGatherMs,
    },
    deliveryEvents(deps),
  );
  const unwatch = await store.watchOutbox(() => dispatcher.wake());
  dispatcher.start();
  const sweeper = startSweeper(
    tuning.sweepMs,
    async (signal) => {
      const now = clock.now();
      await store.releaseHeld(now);
      await store.deleteExpiredEventSubscriptions(now);
      await sweepOldMessages(store, now - retentionMs, tuning.retentionBatch, signal);
      // Not delivery's, but the same periodic chore: what the authorization server left expired.
      await sweepInBatches((limit) => store.deleteExpiredOAuthRecords(now, limit), tuning.retentionBatch, signal);
    },
    (error) => log?.error({ err: error }, 'delivery sweep failed'),
  );
  const drain = async (): Promise<void> => {
    unwatch();
    await sweeper.stop();
    await dispatcher.stop();
    await sender.close();
  };
  let stopping: Promise<void> | undefined;
  return {
    wake: () => dispatcher.wake(),
    stop: () => (stopping ??= drain()),
  };
}

/** What an operator needs of a failed attempt: whose, which message, what went wrong, and what happens next. */
function logFailedAttempt(log: DeliveryLog | undefined, record: AttemptRecord, serviceId: string): void {
  const why = record.responseStatus !== null ? `HTTP ${record.responseStatus}` : (record.error ?? 'no answer');
  const nextAttemptAt = record.verdict.kind === 'retry' ? new Date(record.verdict.nextAttemptAt).toISOString() : null;
  log?.warn(
    { serviceId, messageId: record.messageId, responseStatus: record.responseStatus, error: record.error, nextAttemptAt },
    `delivery attempt failed (${why}); ${nextAttemptAt === null ? 'no attempt left: the message is failed' : `next attempt at ${nextAttemptAt}`}`,
  );
}

/** A setting that cannot be used stops the start as other bad settings do (the CLI exits 2). */
function setting<T>(name: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new ConfigError(`${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Metrics for every recorded attempt; a warning for each failed attempt, and when a service's messages start being held. */
function deliveryEvents({ registry, store, clock, log }: DeliveryDeps): DispatcherEvents {
  const metrics = registry && createDeliveryMetrics(registry, { stats: () => store.outboxStats(), now: () => clock.now() });
  const service = serviceLabeller();
  return {
    recorded(record, status, serviceId) {
      metrics?.deliveries.inc({ outcome: status === 'pending' ? 'retry' : status, service: service(serviceId) });
      if (record.verdict.kind === 'retry' || record.verdict.kind === 'exhausted') logFailedAttempt(log, record, serviceId);
      metrics?.attemptDuration.observe({ result: record.verdict.kind === 'delivered' ? 'success' : 'failure' }, record.durationMs / 1000);
      if (status === 'held') {
        log?.warn(
          { serviceId, messageId: record.messageId, responseStatus: record.responseStatus, error: record.error },
          record.verdict.kind === 'gone'
            ? 'delivery endpoint answered 410 Gone: disabled, its messages held until an admin enables it'
            : 'delivery held: the endpoint is disabled (or failed for five days), or the service is disabled or has no callback URL',
        );
      }
    },
    failed(error, during) {
      log?.error({ err: error, during }, `delivery ${during} failed`);
    },
  };
}
