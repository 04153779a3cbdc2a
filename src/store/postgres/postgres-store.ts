/**
 * The Store on PostgreSQL (`pg`) for any number of nodes sharing one database. Each method is one
 * statement or one transaction; the per-backend differences live in this directory only.
 */
import type { DeviceStatus } from '../../catalog/types.js';
import type {
  AccessToken,
  AttemptRecord,
  ClaimedDelivery,
  ClaimRequest,
  Connection,
  DeliveryAttempt,
  Device,
  DeviceState,
  EndpointHealth,
  EventSubscribeResult,
  EventSubscription,
  LookupChange,
  LookupWatcher,
  MessageFilter,
  NewDevice,
  NewService,
  OutboxMessage,
  OutboxStats,
  PushSubscription,
  RateLease,
  RateLimit,
  RecordedStatus,
  RetryReason,
  Service,
  ServicePatch,
  Store,
  User,
} from '../store.js';
import type { OAuthArea } from '../areas/oauth.js';
import { postgresOAuth } from './postgres-oauth.js';
import * as accounts from './accounts.js';
import { Sql, type ListenClient, type Pool } from './database.js';
import * as delivery from './delivery.js';
import * as devices from './devices.js';
import { loadMigrations, migrate } from './migrate.js';
import { Notifications, notifyLookupChange } from './notify.js';
import * as outbox from './outbox.js';
import { openListenClient, openPool } from './pool.js';
import * as rateLimit from './rate-limit.js';
import * as subscriptions from './subscriptions.js';

/** The OAuth area's operations, which the constructor puts on each store. */
export interface PostgresStore extends OAuthArea {}

export class PostgresStore implements Store {
  readonly #sql: Sql;
  readonly #notifications: Notifications;
  /** Lookup changes being told, which close() lets finish: a CLI command closes right after its change. */
  readonly #publishing = new Set<Promise<void>>();

  /** `listen` opens the connection that waits for notifications, outside the pool. */
  constructor(pool: Pool, listen: () => ListenClient) {
    this.#sql = Sql.over(pool);
    this.#notifications = new Notifications(listen);
    // The OAuth area (issue 13): its backend module's operations, as this store's own.
    Object.assign(this, postgresOAuth(this.#sql));
  }

  /** A store for `postgres://…` (settings: pool.ts) that connects on first use. Call migrate() before use. */
  static open(databaseUrl: string): PostgresStore {
    return new PostgresStore(openPool(databaseUrl), () => openListenClient(databaseUrl));
  }

  async migrate(): Promise<void> {
    await migrate(this.#sql, loadMigrations(), Date.now());
  }

  async ping(): Promise<void> {
    await this.#sql.run('SELECT 1');
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.#publishing);
    await this.#notifications.close();
    await this.#sql.end();
  }

  statementsSent(): number {
    return this.#sql.statementsSent;
  }

  transactionsRetried(): Readonly<Record<RetryReason, number>> {
    return this.#sql.transactionsRetried;
  }

  async publishLookupChange(change: LookupChange): Promise<void> {
    const publishing = notifyLookupChange(this.#sql, change);
    this.#publishing.add(publishing);
    try {
      await publishing;
    } finally {
      this.#publishing.delete(publishing);
    }
  }

  /** In every process on this database: published changes NOTIFY, and this LISTENs. */
  async watchLookupChanges(watcher: LookupWatcher): Promise<() => void> {
    return this.#notifications.watchLookups(watcher);
  }

  async leaseRateTokens(serviceId: string, want: number, limit: RateLimit, now: number): Promise<RateLease> {
    return rateLimit.leaseRateTokens(this.#sql, serviceId, want, limit, now);
  }

  async createService(service: NewService, at: number): Promise<Service> {
    return accounts.createService(this.#sql, service, at);
  }

  async getService(serviceId: string): Promise<Service | undefined> {
    return accounts.getService(this.#sql, serviceId);
  }

  async listServices(): Promise<Service[]> {
    return accounts.listServices(this.#sql);
  }

  async updateService(serviceId: string, patch: ServicePatch): Promise<Service | undefined> {
    return accounts.updateService(this.#sql, serviceId, patch);
  }

  async rotateWebhookSecret(serviceId: string, secret: string, at: number, previousExpiresAt: number): Promise<boolean> {
    return accounts.rotateWebhookSecret(this.#sql, serviceId, secret, at, previousExpiresAt);
  }

  async createUser(user: User): Promise<boolean> {
    return accounts.createUser(this.#sql, user);
  }

  async getUser(userNumber: string): Promise<User | undefined> {
    return accounts.getUser(this.#sql, userNumber);
  }

  async deleteUser(userNumber: string, at: number): Promise<boolean> {
    return accounts.deleteUser(this.#sql, userNumber, at);
  }

  async createToken(token: Omit<AccessToken, 'revokedAt' | 'revokedReason'>, at: number): Promise<void> {
    return accounts.createToken(this.#sql, token, at);
  }

  async getToken(tokenHash: string): Promise<AccessToken | undefined> {
    return accounts.getToken(this.#sql, tokenHash);
  }

  async getConnection(serviceId: string, userNumber: string): Promise<Connection | undefined> {
    return accounts.getConnection(this.#sql, serviceId, userNumber);
  }

  async markDeviceListLoaded(serviceId: string, userNumber: string, at: number): Promise<void> {
    return accounts.markDeviceListLoaded(this.#sql, serviceId, userNumber, at);
  }

  async disconnect(serviceId: string, userNumber: string, at: number): Promise<boolean> {
    return accounts.disconnect(this.#sql, serviceId, userNumber, at);
  }

  async registerDevice(device: NewDevice, ownerUserNumber: string, at: number): Promise<Device> {
    return devices.registerDevice(this.#sql, device, ownerUserNumber, at);
  }

  async shareDevice(deviceId: string, userNumber: string, at: number): Promise<boolean> {
    return devices.shareDevice(this.#sql, deviceId, userNumber, at);
  }

  async unregisterDevice(deviceId: string, userNumber: string, at: number): Promise<boolean> {
    return devices.unregisterDevice(this.#sql, deviceId, userNumber, at);
  }

  async renameDevice(deviceId: string, alias: string, at: number): Promise<Device | undefined> {
    return devices.renameDevice(this.#sql, deviceId, alias, at);
  }

  async getDevice(deviceId: string): Promise<Device | undefined> {
    return devices.getDevice(this.#sql, deviceId);
  }

  async listUserDevices(userNumber: string): Promise<Device[]> {
    return devices.listUserDevices(this.#sql, userNumber);
  }

  async listVirtualDevices(): Promise<Device[]> {
    return devices.listVirtualDevices(this.#sql);
  }

  async getDeviceState(deviceId: string): Promise<DeviceState | undefined> {
    return devices.getDeviceState(this.#sql, deviceId);
  }

  async getDeviceStatusJson(deviceId: string): Promise<{ statusJson: string; version: number; online: boolean } | undefined> {
    return devices.getDeviceStatusJson(this.#sql, deviceId);
  }

  async applyReport(deviceId: string, status: DeviceStatus, report: DeviceStatus, at: number): Promise<number> {
    return devices.applyReport(this.#sql, deviceId, status, report, at);
  }

  async recordPush(deviceId: string, pushCode: string, at: number): Promise<void> {
    return devices.recordPush(this.#sql, deviceId, pushCode, at);
  }

  async setOnline(deviceId: string, online: boolean): Promise<boolean> {
    return devices.setOnline(this.#sql, deviceId, online);
  }

  async countOnlineDevices(): Promise<number> {
    return devices.countOnlineDevices(this.#sql);
  }

  async listPushSubscriptions(serviceId: string, userNumber: string): Promise<PushSubscription[]> {
    return subscriptions.listPushSubscriptions(this.#sql, serviceId, userNumber);
  }

  async addPushSubscription(serviceId: string, userNumber: string, deviceId: string, at: number): Promise<boolean> {
    return subscriptions.addPushSubscription(this.#sql, serviceId, userNumber, deviceId, at);
  }

  async removePushSubscription(serviceId: string, userNumber: string, deviceId: string): Promise<boolean> {
    return subscriptions.removePushSubscription(this.#sql, serviceId, userNumber, deviceId);
  }

  async listEventSubscriptions(serviceId: string, userNumber: string, now: number): Promise<EventSubscription[]> {
    return subscriptions.listEventSubscriptions(this.#sql, serviceId, userNumber, now);
  }

  async upsertEventSubscription(sub: EventSubscription, now: number, limit: number): Promise<EventSubscribeResult> {
    return subscriptions.upsertEventSubscription(this.#sql, sub, now, limit);
  }

  async removeEventSubscription(serviceId: string, userNumber: string, deviceId: string, now: number): Promise<boolean> {
    return subscriptions.removeEventSubscription(this.#sql, serviceId, userNumber, deviceId, now);
  }

  async reportableDeviceIds(serviceId: string, userNumber: string, deviceIds: string[], now: number): Promise<Set<string>> {
    return subscriptions.reportableDeviceIds(this.#sql, serviceId, userNumber, deviceIds, now);
  }

  async listMessages(serviceId: string, filter: MessageFilter): Promise<OutboxMessage[]> {
    return outbox.listMessages(this.#sql, serviceId, filter);
  }

  async getMessage(messageId: string): Promise<OutboxMessage | undefined> {
    return outbox.getMessage(this.#sql, messageId);
  }

  async listAttempts(messageIds: string[]): Promise<DeliveryAttempt[]> {
    return outbox.listAttempts(this.#sql, messageIds);
  }

  async resendMessage(messageId: string, now: number): Promise<boolean> {
    return outbox.resendMessage(this.#sql, messageId, now);
  }

  async recoverFailed(serviceId: string, since: number, now: number): Promise<number> {
    return outbox.recoverFailed(this.#sql, serviceId, since, now);
  }

  async claimDeliveries(request: ClaimRequest): Promise<ClaimedDelivery[]> {
    return delivery.claimDeliveries(this.#sql, request);
  }

  async recordAttempts(attempts: AttemptRecord[], now: number, disableAfterFailingMs: number): Promise<RecordedStatus[]> {
    return delivery.recordAttempts(this.#sql, attempts, now, disableAfterFailingMs);
  }

  async getEndpointHealth(serviceId: string): Promise<EndpointHealth | undefined> {
    return delivery.getEndpointHealth(this.#sql, serviceId);
  }

  async enableEndpoint(serviceId: string, now: number): Promise<number> {
    return delivery.enableEndpoint(this.#sql, serviceId, now);
  }

  async releaseHeld(now: number, serviceId?: string): Promise<number> {
    return delivery.releaseHeld(this.#sql, now, serviceId);
  }

  async outboxStats(): Promise<OutboxStats> {
    return delivery.outboxStats(this.#sql);
  }

  async deleteExpiredEventSubscriptions(now: number): Promise<number> {
    return subscriptions.deleteExpiredEventSubscriptions(this.#sql, now);
  }

  async deleteOldMessages(before: number, limit: number): Promise<number> {
    return outbox.deleteOldMessages(this.#sql, before, limit);
  }

  /** In every process on this database: commits that made messages due NOTIFY, and this LISTENs. */
  async watchOutbox(listener: () => void): Promise<() => void> {
    return this.#notifications.watchOutbox(listener);
  }

}
