/** Rows as SQLite returns them, and their conversion to the store's types. */
import type { DeviceStatus } from '../../catalog/types.js';
import type { AccessToken, Connection, DeliveryAttempt, Device, DeviceType, MessageKind, MessageStatus, OutboxMessage, PushType, Service, User, WebhookSecret } from '../../core/model.js';

export interface ServiceRow {
  service_id: string;
  name: string;
  key_hash: string;
  allowed_devices: string;
  callback_url: string | null;
  event_callback_url: string | null;
  enabled: number;
  created_at: number;
}

export interface SecretRow {
  secret: string;
  created_at: number;
  expires_at: number | null;
}

export interface UserRow {
  user_number: string;
  country_code: string;
  created_at: number;
}

export interface TokenRow {
  token_hash: string;
  user_number: string;
  service_id: string;
  expires_at: number;
  revoked_at: number | null;
  revoked_reason: 'disconnected' | 'revoked' | null;
}

export interface ConnectionRow {
  service_id: string;
  user_number: string;
  device_list_loaded_at: number | null;
}

export interface DeviceRow {
  device_id: string;
  device_type: string;
  model_name: string;
  alias: string;
  group_id: string | null;
  secret_hash: string;
  virtual: number;
  online: number;
  created_at: number;
}

export interface DeviceWithUsersRow extends DeviceRow {
  /** JSON array of user numbers, owner first. */
  user_numbers: string;
}

export interface OutboxRow {
  message_id: string;
  service_id: string;
  device_id: string;
  kind: MessageKind;
  push_type: PushType;
  sequence: number;
  body: string;
  status: MessageStatus;
  attempts: number;
  next_attempt_at: number;
  created_at: number;
  delivered_at: number | null;
}

export interface AttemptRow {
  message_id: string;
  attempt: number;
  started_at: number;
  duration_ms: number;
  response_status: number | null;
  response_body: string | null;
  error: string | null;
}

export function toService(row: ServiceRow, secrets: SecretRow[]): Service {
  return {
    serviceId: row.service_id,
    name: row.name,
    keyHash: row.key_hash,
    allowedDevices: parseJson<DeviceType[]>(row.allowed_devices),
    callbackUrl: row.callback_url,
    eventCallbackUrl: row.event_callback_url,
    enabled: row.enabled === 1,
    webhookSecrets: secrets.map(toWebhookSecret),
    createdAt: row.created_at,
  };
}

function toWebhookSecret(row: SecretRow): WebhookSecret {
  return { secret: row.secret, createdAt: row.created_at, expiresAt: row.expires_at };
}

export function toUser(row: UserRow): User {
  return { userNumber: row.user_number, countryCode: row.country_code, createdAt: row.created_at };
}

export function toToken(row: TokenRow): AccessToken {
  return {
    tokenHash: row.token_hash,
    userNumber: row.user_number,
    serviceId: row.service_id,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    revokedReason: row.revoked_reason,
  };
}

export function toConnection(row: ConnectionRow): Connection {
  return { serviceId: row.service_id, userNumber: row.user_number, deviceListLoadedAt: row.device_list_loaded_at };
}

function toDevice(row: DeviceRow, userNumbers: string[]): Device {
  return {
    deviceId: row.device_id,
    deviceType: row.device_type,
    modelName: row.model_name,
    alias: row.alias,
    groupId: row.group_id,
    secretHash: row.secret_hash,
    virtual: row.virtual === 1,
    online: row.online === 1,
    userNumbers,
    createdAt: row.created_at,
  };
}

export function toDeviceWithUsers(row: DeviceWithUsersRow): Device {
  return toDevice(row, parseJson<string[]>(row.user_numbers));
}

export function toMessage(row: OutboxRow): OutboxMessage {
  return {
    messageId: row.message_id,
    serviceId: row.service_id,
    deviceId: row.device_id,
    kind: row.kind,
    pushType: row.push_type,
    sequence: row.sequence,
    body: row.body,
    status: row.status,
    attempts: row.attempts,
    createdAt: row.created_at,
    nextAttemptAt: row.next_attempt_at,
    deliveredAt: row.delivered_at,
  };
}

export function toAttempt(row: AttemptRow): DeliveryAttempt {
  return {
    messageId: row.message_id,
    attempt: row.attempt,
    startedAt: row.started_at,
    durationMs: row.duration_ms,
    responseStatus: row.response_status,
    responseBody: row.response_body,
    error: row.error,
  };
}

/** The store wrote this JSON itself, so its shape is known. */
export function parseJson<T>(text: string): T {
  return JSON.parse(text) as T;
}

export function parseStatus(text: string): DeviceStatus {
  return parseJson<DeviceStatus>(text);
}

export function flag(value: boolean): number {
  return value ? 1 : 0;
}
