/**
 * @appliance-cloud/client: the partner SDK of the Home Appliance Cloud Interface (DESIGN I).
 * @packageDocumentation
 */
export { ApplianceCloud } from './client.js';
export type {
  ApplianceCloudOptions,
  ControlOf,
  ControlOptions,
  DeviceHandle,
  DeviceListItem,
  DeviceType,
  Endpoint,
  EventExpiry,
  EventSubscription,
  Ok,
  ProfileOf,
  PushSubscription,
  RateLimitStatus,
  StatusOf,
  TokenProvider,
  User,
  VersionedStatus,
} from './client.js';
export type { CallOptions } from './transport.js';
export { ApplianceCloudError, ERROR_CODE_NAMES, isApplianceCloudError, type ApiErrorCode, type ApplianceCloudErrorInit, type ClientErrorCode, type ErrorCode } from './errors.js';
export { baseUrlOf, type Phase, type Region } from './hosts.js';
export { newMessageId } from './message-id.js';
export { verifyWebhook, WebhookVerificationError, type HeadersLike, type VerifyOptions, type WebhookFailure } from './webhooks.js';
export { Deduplicator, SequenceOrderer, type SequenceOrdererOptions } from './receiving.js';
export type * from './messages.js';
export type { Descriptor, PropertyDescriptor, RangeValue } from './profile.js';
export type * from './generated/devices.js';
export type { paths } from './generated/openapi.js';
export * as oauth from './oauth.js';
