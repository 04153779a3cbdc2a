/** Prometheus metrics (DESIGN E), one registry per app so that several apps can live in one process (tests). */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import type { OutboxStats } from './store/areas/delivery.js';
import type { RetryReason, StatementCounts } from './store/store.js';

export interface Metrics {
  registry: Registry;
  httpDuration: RequestDurations;
  reportsRejected: Counter<'source'>;
  /** Device messages that could not be handled (the store failed): not acknowledged, so they come again. */
  reportsFailed: Counter<'source'>;
  /** Faults thrown in a broker hook or handler, caught so that they end neither the process nor other devices' traffic. */
  brokerFaults: Counter<'hook'>;
  connectedDevices: Gauge;
}

export function createMetrics(collect: { connectedDevices: () => Promise<number> }): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpDuration: new RequestDurations(registry),
    reportsRejected: new Counter({
      name: 'device_reports_rejected_total',
      help: 'Device reports refused because they do not fit the profile',
      labelNames: ['source'],
      registers: [registry],
    }),
    reportsFailed: new Counter({
      name: 'device_reports_failed_total',
      help: 'Device messages not handled because the store failed; left unacknowledged for the device or broker to send again',
      labelNames: ['source'],
      registers: [registry],
    }),
    brokerFaults: new Counter({
      name: 'mqtt_hook_faults_total',
      help: 'Errors thrown in MQTT broker hooks and handlers, caught and answered by refusing the packet',
      labelNames: ['hook'],
      registers: [registry],
    }),
    connectedDevices: new Gauge({
      name: 'devices_connected',
      help: 'Devices currently connected',
      registers: [registry],
      async collect() {
        this.set(await collect.connectedDevices());
      },
    }),
  };
}

/** One series of http_request_duration_seconds: its requests by bucket (the last past every bound), their sum and count. */
interface DurationSeries {
  labels: { method: string; route: string; status_code: string };
  counts: number[];
  sum: number;
  count: number;
}

/**
 * http_request_duration_seconds, exported as prom-client exports a Histogram with these labels and
 * buckets (a test holds the two together), observed without its generic label handling: for every
 * request, prom-client's observe validated and hashed a labels object and looked its bucket up by
 * the bound's number as a property name, 2.4 % of a status read's CPU (issue 16).
 */
export class RequestDurations {
  readonly name = 'http_request_duration_seconds';
  readonly help = 'Latency of HTTP requests by route';
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  static readonly BUCKETS: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];
  /** By method, route and status. */
  readonly #series = new Map<string, DurationSeries>();

  constructor(registry: Registry) {
    // prom-client types registerMetric for its own classes; the registry reads a metric's name, help, type, get() and reset().
    registry.registerMetric(this as unknown as Metric);
  }

  /** One request's latency. */
  observe(method: string, route: string, statusCode: number, seconds: number): void {
    const key = `${method} ${route} ${statusCode}`;
    let series = this.#series.get(key);
    if (series === undefined) {
      series = { labels: { method, route, status_code: String(statusCode) }, counts: new Array<number>(RequestDurations.BUCKETS.length + 1).fill(0), sum: 0, count: 0 };
      this.#series.set(key, series);
    }
    let bucket = 0;
    while (bucket < RequestDurations.BUCKETS.length && seconds > RequestDurations.BUCKETS[bucket]!) bucket += 1;
    series.counts[bucket]! += 1;
    series.sum += seconds;
    series.count += 1;
  }

  /** What the registry prints: per series, the cumulative count of each bucket, then +Inf, the sum and the count. */
  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: { labels: Record<string, string | number>; value: number; metricName: string }[] }> {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const { labels, counts, sum, count } of this.#series.values()) {
      let cumulative = 0;
      RequestDurations.BUCKETS.forEach((le, bucket) => {
        cumulative += counts[bucket]!;
        values.push({ labels: { le, ...labels }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', ...labels }, value: count, metricName: `${this.name}_bucket` });
      values.push({ labels: { ...labels }, value: sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...labels }, value: count, metricName: `${this.name}_count` });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values });
  }

  reset(): void {
    this.#series.clear();
  }
}

/**
 * Services named in delivery labels, per process: the first ones to get attempts; later ones count
 * as `other`. Services are few and made by operators, but a label per service must not grow a
 * series per service without bound on a platform with thousands of partners.
 */
export const SERVICE_LABELS = 100;

/** The `service` label of a serviceId: itself for the first SERVICE_LABELS services seen, then `other`. */
export function serviceLabeller(limit = SERVICE_LABELS): (serviceId: string) => string {
  const named = new Set<string>();
  return (serviceId) => {
    if (named.has(serviceId)) return serviceId;
    if (named.size >= limit) return 'other';
    named.add(serviceId);
    return serviceId;
  };
}

/** Delivery (DESIGN C, E): what happened to attempts, and how much waits. */
export interface DeliveryMetrics {
  /** One per recorded attempt, by what became of its message (delivered, retry, failed, held, or fenced) and service. */
  deliveries: Counter<'outcome' | 'service'>;
  attemptDuration: Histogram<'result'>;
}

/** Registers the delivery metrics on an app's registry; the gauges read `stats` once per scrape. */
export function createDeliveryMetrics(registry: Registry, collect: { stats: () => Promise<OutboxStats>; now: () => number }): DeliveryMetrics {
  let scrape: Promise<OutboxStats> | undefined;
  // The three gauges are collected together: one query serves them all.
  const stats = (): Promise<OutboxStats> => (scrape ??= collect.stats().finally(() => (scrape = undefined)));
  new Gauge({
    name: 'deliveries_pending',
    help: 'Messages waiting for delivery or being delivered',
    registers: [registry],
    async collect() {
      const { pending, delivering } = await stats();
      this.set(pending + delivering);
    },
  });
  new Gauge({
    name: 'deliveries_held',
    help: 'Messages held for a disabled service or endpoint, or a service without a callback URL',
    registers: [registry],
    async collect() {
      this.set((await stats()).held);
    },
  });
  new Gauge({
    name: 'deliveries_oldest_pending_age_seconds',
    help: 'Age of the oldest message waiting for delivery; 0 when none waits',
    registers: [registry],
    async collect() {
      const { oldestPendingAt } = await stats();
      this.set(oldestPendingAt === null ? 0 : Math.max(0, (collect.now() - oldestPendingAt) / 1000));
    },
  });
  return {
    deliveries: new Counter({
      name: 'deliveries_total',
      help: 'Delivery attempts by what became of their message, and by service (the first 100 services a process delivers for; then "other")',
      labelNames: ['outcome', 'service'],
      registers: [registry],
    }),
    attemptDuration: new Histogram({
      name: 'delivery_attempt_duration_seconds',
      help: 'Latency of delivery attempts, from request to the end of the (capped) response',
      labelNames: ['result'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
  };
}

/**
 * `store_statements_total` (issue 6) and `store_transactions_retried_total` (DESIGN J), read from the
 * store at each scrape; only a store that counts them (PostgreSQL) has them.
 */
export function registerStoreMetrics(registry: Registry, counts: StatementCounts | null): void {
  if (!counts) return;
  registerRetries(registry, counts.transactionsRetried);
  let reported = 0;
  new Counter({
    name: 'store_statements_total',
    help: 'SQL statements sent to the database, transaction control and NOTIFY included',
    registers: [registry],
    collect() {
      const sent = counts.statementsSent();
      this.inc(sent - reported);
      reported = sent;
    },
  });
}

function registerRetries(registry: Registry, retried: () => Readonly<Record<RetryReason, number>>): void {
  const reported: Record<RetryReason, number> = { serialization: 0, deadlock: 0 };
  new Counter({
    name: 'store_transactions_retried_total',
    help: 'Transactions run again after the database aborted them for a serialization failure or a deadlock',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      const now = retried();
      for (const reason of Object.keys(reported) as RetryReason[]) {
        this.inc({ reason }, now[reason] - reported[reason]);
        reported[reason] = now[reason];
      }
    },
  });
}
