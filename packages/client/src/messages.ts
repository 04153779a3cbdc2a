/** The messages the interface delivers to a calling service's callback URLs (DESIGN A.8), as types. */
import type { DeviceType } from './client.js';
import type { DeviceTypes } from './generated/devices.js';
import type { components } from './generated/openapi.js';

type Schemas = components['schemas'];

/** What every message is about. */
export interface Addressed {
  serviceId: string;
  deviceId: string;
}

/** The lifecycle messages as the server's `webhooks` declare them (generated from /openapi.json). */
export type DeviceRegistered = Schemas['DeviceRegisteredMessage']['push'];
export type DeviceUnregistered = Schemas['DeviceUnregisteredMessage']['push'];
export type DeviceAliasChanged = Schemas['DeviceAliasChangedMessage']['push'];

/** A notification a device raised; `pushCode` is one of its type's codes (narrow on `deviceType`). */
export type DevicePush = {
  [T in DeviceType]: Addressed & { pushType: 'DEVICE_PUSH'; deviceType: T; pushCode: DeviceTypes[T]['pushCode']; userList: string[] };
}[DeviceType];

/** A change of status; `report` is only the changed part, in its type's status shape. */
export type DeviceStatusEvent = {
  [T in DeviceType]: Addressed & { pushType: 'DEVICE_STATUS'; deviceType: T; report: DeviceTypes[T]['status']; userList: string[] };
}[DeviceType];

export type PushBody = DeviceRegistered | DeviceUnregistered | DeviceAliasChanged | DevicePush;

/** The Standard Webhooks headers the message came with. */
export interface Delivery {
  /** `webhook-id`: the message's id, the same on every attempt: de-duplicate by it. */
  webhookId: string;
  /** `webhook-timestamp`: unix seconds of this attempt. */
  timestamp: number;
  /** `webhook-sequence`: increases per (service, device) in the order the messages occurred; null when absent. */
  sequence: number | null;
}

/** What every message carries beside its body. */
export interface Envelope {
  messageId: string;
  /** UTC, ISO 8601 without zone, with microseconds: `2025-01-09T04:24:35.540658`. */
  timestamp: string;
  delivery: Delivery;
}

/** A `push` message, with its body's `pushType` lifted beside it so that a `switch` narrows it. */
export type PushMessage = {
  [K in PushBody['pushType']]: Envelope & { pushType: K; push: Extract<PushBody, { pushType: K }> };
}[PushBody['pushType']];

/** An `event` message (DEVICE_STATUS). */
export type EventMessage = Envelope & { pushType: 'DEVICE_STATUS'; event: DeviceStatusEvent };

/** What {@link verifyWebhook} returns: discriminated by `pushType`. */
export type WebhookMessage = PushMessage | EventMessage;
