/** Prometheus metrics (DESIGN E), one registry per app so that several apps can live in one process (tests). */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  httpDuration: Histogram<'method' | 'route' | 'status_code'>;
  reportsRejected: Counter<'source'>;
  connectedDevices: Gauge;
}

export function createMetrics(collect: { connectedDevices: () => Promise<number> }): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Latency of HTTP requests by route',
      labelNames: ['method', 'route', 'status_code'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers: [registry],
    }),
    reportsRejected: new Counter({
      name: 'device_reports_rejected_total',
      help: 'Device reports refused because they do not fit the profile',
      labelNames: ['source'],
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
