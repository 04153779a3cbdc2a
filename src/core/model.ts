/**
 * The domain's records: calling services, users, their tokens and connections, devices and their
 * state, subscriptions, and the messages of DESIGN A.8 with their delivery attempts. The store keeps
 * them (src/store/areas/ says how); every layer above reads them from here.
 *
 * Times are epoch milliseconds.
 */
import type { DeviceStatus } from '../catalog/types.js';

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
  /** Where its authorizations may return to (DESIGN G); none when not given. */
  redirectUris?: string[];
}

export type ServicePatch = Partial<Pick<Service, 'name' | 'allowedDevices' | 'callbackUrl' | 'eventCallbackUrl' | 'enabled'>>;

/** The service after `patch`: a field present but undefined means "not given", not "set to undefined". */
export function patchService(service: Service, patch: ServicePatch): Service {
  const given: ServicePatch = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
  return { ...service, ...given };
}

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

/** A device as registered: its first status, before it has users or a creation time. */
export type NewDevice = Omit<Device, 'userNumbers' | 'createdAt'> & { status: DeviceStatus };

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

/** The rate limit of every calling service (DESIGN J). */
export interface RateLimit {
  perSecond: number;
  burst: number;
}
