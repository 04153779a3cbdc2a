/**
 * What the admin API shows of the domain: built field by field, so a secret or hash added to a
 * stored record never reaches an answer by accident.
 */
import type { Static } from 'typebox';
import type { MessageWithAttempts } from '../core/accounts.js';
import type { Device, Service } from '../core/model.js';
import type { DeviceView, MessageView, ServiceView } from './schemas.js';

/** Epoch milliseconds as ISO 8601 UTC. */
export function iso(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

export function serviceView(service: Service, redirectUris: string[]): Static<typeof ServiceView> {
  return {
    serviceId: service.serviceId,
    name: service.name,
    allowedDevices: service.allowedDevices,
    callbackUrl: service.callbackUrl,
    eventCallbackUrl: service.eventCallbackUrl,
    redirectUris,
    enabled: service.enabled,
    createdAt: iso(service.createdAt),
  };
}

export function deviceView(device: Device): Static<typeof DeviceView> {
  return {
    deviceId: device.deviceId,
    deviceType: device.deviceType,
    modelName: device.modelName,
    alias: device.alias,
    ...(device.groupId !== null ? { groupId: device.groupId } : {}),
    virtual: device.virtual,
    online: device.online,
    userNumbers: device.userNumbers,
    createdAt: iso(device.createdAt),
  };
}

export function messageView({ message, attempts }: MessageWithAttempts): Static<typeof MessageView> {
  return {
    messageId: message.messageId,
    deviceId: message.deviceId,
    kind: message.kind,
    pushType: message.pushType,
    sequence: message.sequence,
    status: message.status,
    createdAt: iso(message.createdAt),
    nextAttemptAt: iso(message.nextAttemptAt),
    deliveredAt: message.deliveredAt === null ? null : iso(message.deliveredAt),
    // Stored as the exact text that is POSTed; shown parsed so it reads as part of the answer.
    body: JSON.parse(message.body) as unknown,
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      startedAt: iso(a.startedAt),
      durationMs: a.durationMs,
      responseStatus: a.responseStatus,
      responseBody: a.responseBody,
      error: a.error,
    })),
  };
}
