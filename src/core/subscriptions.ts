/**
 * A service's push and event subscriptions for a connected user's devices (DESIGN A.5): what the
 * partner routes call, with the rules that refuse a subscription (1206, 1207, 1204, 1102, 1312).
 */
import { fail } from '../errors.js';
import type { Clock } from '../ids.js';
import type { Connection, EventSubscription } from './model.js';
import type { Store } from '../store/store.js';
import type { LookupInvalidation } from './cache.js';

/** The service and user a subscription belongs to. */
export type Pair = Pick<Connection, 'serviceId' | 'userNumber'>;

/** How long an event subscription lasts: `timer` of `unit`, one hour by default. */
export interface Expiry {
  unit?: string;
  timer?: number;
}

const UNIT_MS: Record<string, number> = { MINUTE: 60_000, HOUR: 3_600_000, DAY: 86_400_000 };
/** The longest event subscription, in hours (DESIGN A.5). */
export const MAX_EXPIRE_HOURS = 4464;

/** The length of an event subscription in ms; 1102 for an unknown unit or beyond 4464 hours. */
export function expireMs(expire: Expiry | undefined): number {
  const unit = expire?.unit ?? 'HOUR';
  const timer = expire?.timer ?? 1;
  const unitMs = UNIT_MS[unit];
  if (unitMs === undefined) throw fail('1102', `expire.unit must be one of ${Object.keys(UNIT_MS).join(', ')}; got ${JSON.stringify(unit)}.`);
  const ms = timer * unitMs;
  if (ms > MAX_EXPIRE_HOURS * UNIT_MS.HOUR!) {
    throw fail('1102', `expire must be at most ${MAX_EXPIRE_HOURS} hours; got ${timer} ${unit}.`);
  }
  return ms;
}

export interface SubscriptionsDeps {
  store: Store;
  clock: Clock;
  /** The most unexpired event subscriptions one service may hold for one user (1312 beyond). */
  eventSubscriptionLimit: number;
  /** Told of each change of event subscriptions: the device list's `reportable` is read through it. */
  lookups: Pick<LookupInvalidation, 'eventsChanged'>;
}

export class Subscriptions {
  constructor(private readonly deps: SubscriptionsDeps) {}

  /** The devices the service receives DEVICE_PUSH for. */
  async pushDeviceIds(pair: Pair): Promise<string[]> {
    const subscriptions = await this.deps.store.listPushSubscriptions(pair.serviceId, pair.userNumber);
    return subscriptions.map((s) => s.deviceId);
  }

  /** Subscribes to a device's DEVICE_PUSH; 1207 when already subscribed. */
  async subscribePush(pair: Pair, deviceId: string): Promise<void> {
    const added = await this.deps.store.addPushSubscription(pair.serviceId, pair.userNumber, deviceId, this.deps.clock.now())
      .catch((error: unknown) => this.refused(pair, deviceId, error));
    if (!added) {
      throw fail('1207', `Push for device ${deviceId} is already subscribed.`);
    }
  }

  /** 1206 when there was no push subscription. */
  async unsubscribePush(pair: Pair, deviceId: string): Promise<void> {
    if (!(await this.deps.store.removePushSubscription(pair.serviceId, pair.userNumber, deviceId))) {
      throw fail('1206', `Push for device ${deviceId} is not subscribed.`);
    }
  }

  /** The unexpired event subscriptions. */
  async events(pair: Pair): Promise<EventSubscription[]> {
    return this.deps.store.listEventSubscriptions(pair.serviceId, pair.userNumber, this.deps.clock.now());
  }

  /** Subscribes to a device's DEVICE_STATUS, or renews the subscription; 1102 for a bad expiry, 1312 beyond the limit. */
  async subscribeEvents(pair: Pair, deviceId: string, expire: Expiry | undefined): Promise<void> {
    const { store, clock, eventSubscriptionLimit } = this.deps;
    const now = clock.now();
    const subscription = { serviceId: pair.serviceId, userNumber: pair.userNumber, deviceId, expiresAt: now + expireMs(expire) };
    const result = await store.upsertEventSubscription(subscription, now, eventSubscriptionLimit)
      .catch((error: unknown) => this.refused(pair, deviceId, error));
    if (result === 'limit') {
      throw fail('1312', `This service and user already hold ${eventSubscriptionLimit} event subscriptions, the limit.`);
    }
    await this.deps.lookups.eventsChanged(pair.serviceId, pair.userNumber);
  }

  /** 1204 when there was no unexpired event subscription. */
  async unsubscribeEvents(pair: Pair, deviceId: string): Promise<void> {
    const { store, clock, lookups } = this.deps;
    const removed = await store.removeEventSubscription(pair.serviceId, pair.userNumber, deviceId, clock.now());
    // An expired one was deleted too, and no device list showed it.
    if (!removed) throw fail('1204', `Events of device ${deviceId} are not subscribed.`);
    await lookups.eventsChanged(pair.serviceId, pair.userNumber);
  }

  /**
   * Why the store refused to write a subscription: the request's checks passed, but the pair was
   * disconnected (DELETE /user/service, an unlink) or the device unregistered before the write, so
   * the answer is the one those checks would give now (1202, 1205), not an internal error.
   */
  private async refused(pair: Pair, deviceId: string, error: unknown): Promise<never> {
    const { store } = this.deps;
    if (!(await store.getConnection(pair.serviceId, pair.userNumber))) throw fail('1202', 'The user is no longer connected to this service.');
    const device = await store.getDevice(deviceId);
    if (!device?.userNumbers.includes(pair.userNumber)) throw fail('1205', `Device ${deviceId} is not registered to this user.`);
    throw error;
  }
}
