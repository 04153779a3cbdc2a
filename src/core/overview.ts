/**
 * What an operator looks at first (DESIGN H): totals, the outbox, endpoints in trouble and the last
 * hour of delivery attempts, and every service with its endpoint's health. The admin API
 * (GET /admin/overview) and the console both read them here.
 */
import type { Clock } from '../ids.js';
import type { Service } from './model.js';
import type { AttemptMinute } from '../store/areas/overview.js';
import type { EndpointHealth } from '../store/areas/delivery.js';
import type { Store } from '../store/store.js';

/** The chart's window. */
export const LAST_HOUR_MS = 60 * 60 * 1000;

export interface ServiceHealth {
  service: Service;
  health: EndpointHealth;
}

export interface Overview {
  services: number;
  users: number;
  devices: number;
  devicesOnline: number;
  /** Messages waiting: pending (due or retrying), delivering now, held (their endpoint or service is disabled). */
  pending: number;
  delivering: number;
  held: number;
  /** Age of the oldest pending or delivering message; null when none waits. */
  oldestPendingAgeMs: number | null;
  /** Services whose endpoint is failing or disabled, or that are disabled themselves. */
  troubled: ServiceHealth[];
  /** Delivery attempts per minute over the last hour. */
  lastHour: AttemptMinute[];
}

type Deps = { store: Store; clock: Clock };

const HEALTHY = (serviceId: string): EndpointHealth => ({ serviceId, failingSince: null, disabledAt: null, disabledReason: null });

/** Every service with its endpoint's health, in the store's order. */
export async function servicesWithHealth({ store }: Deps): Promise<ServiceHealth[]> {
  const services = await store.listServices();
  return Promise.all(services.map(async (service) => ({ service, health: (await store.getEndpointHealth(service.serviceId)) ?? HEALTHY(service.serviceId) })));
}

/** Whether a service needs an operator: disabled, or its endpoint failing or disabled. */
export function isTroubled({ service, health }: ServiceHealth): boolean {
  return !service.enabled || health.failingSince !== null || health.disabledAt !== null;
}

export async function overview(deps: Deps): Promise<Overview> {
  const now = deps.clock.now();
  const [counts, outbox, services, lastHour] = await Promise.all([
    deps.store.countAccounts(),
    deps.store.outboxStats(),
    servicesWithHealth(deps),
    deps.store.attemptsByMinute(now - LAST_HOUR_MS),
  ]);
  return {
    ...counts,
    pending: outbox.pending,
    delivering: outbox.delivering,
    held: outbox.held,
    oldestPendingAgeMs: outbox.oldestPendingAt === null ? null : Math.max(0, now - outbox.oldestPendingAt),
    troubled: services.filter(isTroubled),
    lastHour,
  };
}
