/**
 * Push and event subscriptions of a (service, user) pair to a device. A subscription to a device of
 * a type the service no longer allows stays, dormant: it is neither listed, counted nor told
 * anything, and wakes if the type is allowed again (DESIGN J).
 */
import type { EventSubscription, PushSubscription } from '../../core/model.js';

export type EventSubscribeResult = 'created' | 'renewed' | 'limit';

export interface SubscriptionsArea {
  /** Oldest first. */
  listPushSubscriptions(serviceId: string, userNumber: string): Promise<PushSubscription[]>;
  /** false when it already existed. Rejects unless the pair is connected and the device is the user's. */
  addPushSubscription(serviceId: string, userNumber: string, deviceId: string, at: number): Promise<boolean>;
  /** false when there was none. */
  removePushSubscription(serviceId: string, userNumber: string, deviceId: string): Promise<boolean>;

  /** Unexpired event subscriptions at `now`, oldest first. */
  listEventSubscriptions(serviceId: string, userNumber: string, now: number): Promise<EventSubscription[]>;
  /**
   * Creates or renews (an expired one too); `limit` when the pair already holds `limit` unexpired other
   * subscriptions (the rule: `mayCreateEventSubscription`, store/rules.ts). Rejects unless the pair is
   * connected and the device is the user's.
   */
  upsertEventSubscription(sub: EventSubscription, now: number, limit: number): Promise<EventSubscribeResult>;
  /** false when there was no unexpired subscription. */
  removeEventSubscription(serviceId: string, userNumber: string, deviceId: string, now: number): Promise<boolean>;
  /** Deletes event subscriptions expired at `now` (they already told nobody anything); returns how many. */
  deleteExpiredEventSubscriptions(now: number): Promise<number>;
}
