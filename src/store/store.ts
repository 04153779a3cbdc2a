/**
 * The store: every state DESIGN names, behind one interface with one implementation per database
 * (sqlite/, postgres/). Every operation that changes what a calling service may be told about also
 * records the resulting messages (DESIGN A.8) in the same transaction: the outbox.
 *
 * Times are epoch milliseconds. Secrets arrive here already hashed, except webhook secrets, which
 * the delivery engine needs in clear to sign with.
 */
import type { DeviceStatus } from '../catalog/types.js';
import type { OAuthArea } from './areas/oauth.js';

export type DeviceType = string;

export interface Service {
  serviceId: string;
  name: string;
  keyHash: string;
  allowedDevices: DeviceType[];
  callbackUrl: string | null;
  eventCallbackUrl: string | null;
  enabled: boolean;
  /** Newest first; during a rotation the previous one stays until `expiresAt`. */
  webhookSecrets: WebhookSecret[];
  createdAt: number;
}

export interface WebhookSecret {
  secret: string;
  createdAt: number;
  /** null while current. */
  expiresAt: number | null;
}

export interface NewService {
  serviceId: string;
  name: string;
  keyHash: string;
  allowedDevices: DeviceType[];
  callbackUrl: string | null;
  eventCallbackUrl: string | null;
  webhookSecret: string;
}

export type ServicePatch = Partial<Pick<Service, 'name' | 'allowedDevices' | 'callbackUrl' | 'eventCallbackUrl' | 'enabled'>>;

export interface User {
  userNumber: string;
  countryCode: string;
  createdAt: number;
}

export interface AccessToken {
  tokenHash: string;
  userNumber: string;
  serviceId: string;
  expiresAt: number;
  /** Set when revoked; `disconnected` tokens answer 1202, others 1103. */
  revokedAt: number | null;
  revokedReason: 'disconnected' | 'revoked' | null;
}

/** A user's connection to a calling service (created when a token is issued). */
export interface Connection {
  serviceId: string;
  userNumber: string;
  /** When the service first called GET /devices for this user; also its lifecycle subscription. */
  deviceListLoadedAt: number | null;
}

export interface Device {
  deviceId: string;
  deviceType: DeviceType;
  modelName: string;
  alias: string;
  groupId: string | null;
  secretHash: string;
  virtual: boolean;
  online: boolean;
  /** Users the device is registered to: the owner first, then users it was shared with. */
  userNumbers: string[];
  createdAt: number;
}

export interface NewDevice {
  deviceId: string;
  deviceType: DeviceType;
  modelName: string;
  alias: string;
  groupId: string | null;
  secretHash: string;
  virtual: boolean;
  online: boolean;
  status: DeviceStatus;
}

export interface DeviceState {
  deviceId: string;
  status: DeviceStatus;
  /** Increments on every change of status. */
  version: number;
  online: boolean;
}

export interface PushSubscription {
  serviceId: string;
  userNumber: string;
  deviceId: string;
  createdAt: number;
}

export interface EventSubscription {
  serviceId: string;
  userNumber: string;
  deviceId: string;
  expiresAt: number;
}

export type MessageKind = 'push' | 'event';
export type PushType = 'DEVICE_REGISTERED' | 'DEVICE_UNREGISTERED' | 'DEVICE_ALIAS_CHANGED' | 'DEVICE_PUSH' | 'DEVICE_STATUS';
export type MessageStatus = 'pending' | 'delivering' | 'delivered' | 'failed' | 'held';

/** One message for one service: its final body, where it goes, and its place in the device's order. */
export interface OutboxMessage {
  messageId: string;
  serviceId: string;
  deviceId: string;
  kind: MessageKind;
  pushType: PushType;
  /** Per (service, device), from 1, in the order the changes occurred. */
  sequence: number;
  /** The exact JSON body to POST (DESIGN A.8). */
  body: string;
  status: MessageStatus;
  attempts: number;
  createdAt: number;
  nextAttemptAt: number;
  deliveredAt: number | null;
}

export interface DeliveryAttempt {
  messageId: string;
  attempt: number;
  startedAt: number;
  durationMs: number;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
}

export interface MessageFilter {
  status?: MessageStatus;
  deviceId?: string;
  since?: number;
  limit?: number;
}

export type EventSubscribeResult = 'created' | 'renewed' | 'limit';

/** Why a database aborted a transaction that may simply run again: it lost a race with another. */
export type RetryReason = 'serialization' | 'deadlock';

/** What changed of the records the partner lookups read (src/core/cache.ts says what each covers). */
export type LookupChange = { serviceId: string } | { userNumber: string } | { deviceId: string };

export interface LookupWatcher {
  changed(change: LookupChange): void;
  /** Changes may have gone unseen: whatever was kept from before must be read again. */
  missed(): void;
}

/** The rate limit of every calling service (DESIGN J). */
export interface RateLimit {
  perSecond: number;
  burst: number;
}

/** What a lease took from a rate-limit bucket, and what the bucket holds after it. */
export interface RateLease {
  granted: number;
  tokens: number;
}

export interface Store extends DeliveryStore, OAuthArea {
  /** Runs pending migrations. Idempotent. */
  migrate(): Promise<void>;
  /** Resolves when the database answers; rejects otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /**
   * How many SQL statements this store has sent since it opened, transaction control and NOTIFY
   * included (issue 6 counts them per delivery and per request). Undefined where not counted (SQLite).
   */
  statementsSent?(): number;
  /**
   * How many transactions this store ran again since it opened, by why the database aborted them
   * (DESIGN J: their callers never see it). Undefined where none are retried (SQLite).
   */
  transactionsRetried?(): Readonly<Record<RetryReason, number>>;

  /**
   * Tells every process on this database that something the partner lookups read changed, so that
   * their caches drop it (this process's cache was told directly). PostgreSQL NOTIFYs; SQLite sends
   * nothing: another process on the same file sees the change when its cache entry expires.
   */
  publishLookupChange(change: LookupChange): Promise<void>;
  /**
   * Calls `watcher` for each change published by any process on this database (this one included),
   * and `watcher.missed()` after changes may have been missed (its connection was lost and is back).
   * Resolves once watching, with the unsubscribe. SQLite calls nothing.
   */
  watchLookupChanges(watcher: LookupWatcher): Promise<() => void>;
  /**
   * Only where several nodes share the database (PostgreSQL): takes up to `want` whole tokens from the
   * service's rate-limit bucket, refilled at `limit.perSecond` up to `now` and holding at most
   * `limit.burst` (a new bucket is full). A store without it is the only node: its limits are local.
   */
  leaseRateTokens?(serviceId: string, want: number, limit: RateLimit, now: number): Promise<RateLease>;

  createService(service: NewService, at: number): Promise<Service>;
  getService(serviceId: string): Promise<Service | undefined>;
  listServices(): Promise<Service[]>;
  updateService(serviceId: string, patch: ServicePatch): Promise<Service | undefined>;
  /**
   * Makes `secret` current; the previous current secret stays valid until `previousExpiresAt` (not
   * kept at all when that is `at` or earlier), and any older one is deleted at once.
   */
  rotateWebhookSecret(serviceId: string, secret: string, at: number, previousExpiresAt: number): Promise<boolean>;

  createUser(user: User): Promise<boolean>;
  getUser(userNumber: string): Promise<User | undefined>;
  /**
   * Unregisters the user's devices (with their messages), removes its connections and subscriptions,
   * and revokes its tokens as `disconnected` (so a later call with one answers 1202, not 1103).
   */
  deleteUser(userNumber: string, at: number): Promise<boolean>;

  /** Stores a token and connects its user to its service (keeping an existing connection as it is). */
  createToken(token: Omit<AccessToken, 'revokedAt' | 'revokedReason'>, at: number): Promise<void>;
  getToken(tokenHash: string): Promise<AccessToken | undefined>;

  getConnection(serviceId: string, userNumber: string): Promise<Connection | undefined>;
  /** Marks the device list loaded (and the lifecycle subscription on) if it was not already. */
  markDeviceListLoaded(serviceId: string, userNumber: string, at: number): Promise<void>;
  /**
   * DELETE /user/service: deletes the pair's push and event subscriptions, its loaded device list and
   * lifecycle subscription, the connection, and revokes the pair's tokens as `disconnected`.
   * Messages already in the outbox stay.
   */
  disconnect(serviceId: string, userNumber: string, at: number): Promise<boolean>;

  /**
   * Registers a device to its owner, with its first status (version 1); records DEVICE_REGISTERED.
   * Rejects, writing nothing, when the device id is taken or the owner is unknown.
   */
  registerDevice(device: NewDevice, ownerUserNumber: string, at: number): Promise<Device>;
  /** Registers an existing device to one more user of the home; records DEVICE_REGISTERED. false when either is unknown or it is already theirs. */
  shareDevice(deviceId: string, userNumber: string, at: number): Promise<boolean>;
  /**
   * Unregisters a device from one user: records DEVICE_UNREGISTERED, deletes that user's subscriptions
   * to it, and deletes the device itself when no user is left.
   */
  unregisterDevice(deviceId: string, userNumber: string, at: number): Promise<boolean>;
  /** Renames a device; records DEVICE_ALIAS_CHANGED unless the alias is unchanged. undefined when unknown. */
  renameDevice(deviceId: string, alias: string, at: number): Promise<Device | undefined>;
  getDevice(deviceId: string): Promise<Device | undefined>;
  /** Devices registered to the user (owned or shared), oldest first. */
  listUserDevices(userNumber: string): Promise<Device[]>;
  /** Every virtual appliance, oldest first: the simulator adopts them at start. */
  listVirtualDevices(): Promise<Device[]>;

  getDeviceState(deviceId: string): Promise<DeviceState | undefined>;
  /** The state with its status as the JSON text stored: a status read splices it into the answer unparsed. */
  getDeviceStatusJson(deviceId: string): Promise<{ statusJson: string; version: number; online: boolean } | undefined>;
  /**
   * Replaces the device's status with `status` (which already includes `report`), increments its
   * version, and records DEVICE_STATUS with `report` for each service holding an unexpired event
   * subscription. An empty report changes nothing and returns the current version. Rejects when the
   * device is unknown.
   */
  applyReport(deviceId: string, status: DeviceStatus, report: DeviceStatus, at: number): Promise<number>;
  /** Records DEVICE_PUSH for each service with a push subscription to the device (none for an unknown one). */
  recordPush(deviceId: string, pushCode: string, at: number): Promise<void>;
  setOnline(deviceId: string, online: boolean): Promise<boolean>;
  /** How many devices are connected now (a gauge of /metrics). */
  countOnlineDevices(): Promise<number>;

  listPushSubscriptions(serviceId: string, userNumber: string): Promise<PushSubscription[]>;
  /** false when it already existed. Rejects unless the pair is connected and the device is the user's. */
  addPushSubscription(serviceId: string, userNumber: string, deviceId: string, at: number): Promise<boolean>;
  /** false when there was none. */
  removePushSubscription(serviceId: string, userNumber: string, deviceId: string): Promise<boolean>;

  /** Unexpired event subscriptions at `now`. */
  listEventSubscriptions(serviceId: string, userNumber: string, now: number): Promise<EventSubscription[]>;
  /**
   * Creates or renews (an expired one too); `limit` when the pair already holds `limit` unexpired other
   * subscriptions. Rejects unless the pair is connected and the device is the user's.
   */
  upsertEventSubscription(sub: EventSubscription, now: number, limit: number): Promise<EventSubscribeResult>;
  /** false when there was no unexpired subscription. */
  removeEventSubscription(serviceId: string, userNumber: string, deviceId: string, now: number): Promise<boolean>;
  /** Device ids among `deviceIds` for which this service and user hold an unexpired event subscription. */
  reportableDeviceIds(serviceId: string, userNumber: string, deviceIds: string[], now: number): Promise<Set<string>>;

  listMessages(serviceId: string, filter: MessageFilter): Promise<OutboxMessage[]>;
  getMessage(messageId: string): Promise<OutboxMessage | undefined>;
  listAttempts(messageIds: string[]): Promise<DeliveryAttempt[]>;
  /** Puts a message back to pending, due now. */
  resendMessage(messageId: string, now: number): Promise<boolean>;
  /** Puts every failed message of the service created since `since` back to pending; returns how many. */
  recoverFailed(serviceId: string, since: number, now: number): Promise<number>;
}

// Delivery (DESIGN C): what the dispatcher needs from the outbox. Every call is one transaction, so
// several dispatchers (processes, with PostgreSQL) can share one outbox.

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
  /** 410 Gone: the endpoint asks to be disabled. */
  | { kind: 'gone' };

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

/**
 * The outbox operations of the delivery engine. Order is per (service, device): a message is
 * claimed only when no earlier one of its service and device is pending, delivering or held.
 * A service's messages are held while the service is disabled, its endpoint is disabled, or it has
 * no URL for the message's kind.
 */
export interface DeliveryStore {
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
  /** A service's endpoint health (healthy when nothing was recorded); undefined for an unknown service. */
  getEndpointHealth(serviceId: string): Promise<EndpointHealth | undefined>;
  /** Clears a disabled endpoint and releases the service's held messages; returns how many were released. */
  enableEndpoint(serviceId: string, now: number): Promise<number>;
  /**
   * Puts held messages back to pending, due now, with their retry schedule started over, where
   * delivery is possible again (of every service, or of `serviceId`); returns how many.
   */
  releaseHeld(now: number, serviceId?: string): Promise<number>;
  outboxStats(): Promise<OutboxStats>;
  /** Deletes event subscriptions expired at `now` (they already told nobody anything); returns how many. */
  deleteExpiredEventSubscriptions(now: number): Promise<number>;
  /**
   * Deletes up to `limit` delivered or failed messages created before `before`, oldest first, with
   * their attempts (DESIGN J, MESSAGE_RETENTION); never an open one. Returns how many. Their
   * (service, device) orders keep counting from where they were.
   */
  deleteOldMessages(before: number, limit: number): Promise<number>;
  /**
   * Calls `listener` after each commit that made messages due (recorded, resent, recovered or
   * released) — in this process, and with PostgreSQL in every process. Returns the unsubscribe.
   */
  watchOutbox(listener: () => void): Promise<() => void>;
}
