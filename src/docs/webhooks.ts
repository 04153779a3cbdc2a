/**
 * The messages of DESIGN A.8 as the OpenAPI 3.1 `webhooks` section: what a service's callback URL
 * receives, body by body (the fields and order of src/store/messages.ts), signed as src/delivery/sign.ts does.
 */
import { Type, type TSchema } from 'typebox';
import type { PushType } from '../core/model.js';
import { componentRef, pascalCase } from './catalog-schemas.js';

const MessageId = Type.String({ pattern: '^[A-Za-z0-9_-]{22}$', description: 'Unique per message; the same on every retry (also header webhook-id).' });
const Timestamp = Type.String({ description: 'When the message was produced: UTC, ISO 8601 without zone, microseconds', examples: ['2025-01-09T04:24:35.540658'] });
const ref = (name: string) => Type.Unsafe<unknown>(componentRef(name));
const addressed = (pushType: PushType) => ({
  pushType: Type.Literal(pushType),
  serviceId: Type.String({ description: 'The service the message is for.' }),
  deviceId: Type.String(),
});
const UserNumber = Type.String({ description: 'The user whose device it is.' });
const UserList = Type.Array(Type.String(), { description: 'The userNumbers of the service\'s users who subscribed to this device.' });

interface Message {
  pushType: PushType;
  kind: 'push' | 'event';
  summary: string;
  body: TSchema;
}

const MESSAGES: readonly Message[] = [
  {
    pushType: 'DEVICE_REGISTERED', kind: 'push',
    summary: 'A user with a loaded device list registered a device of an allowed type.',
    body: Type.Object({ ...addressed('DEVICE_REGISTERED'), userNumber: UserNumber, modelName: Type.String(), deviceType: ref('DeviceType'), alias: Type.String() }),
  },
  {
    pushType: 'DEVICE_UNREGISTERED', kind: 'push',
    summary: "Such a device was unregistered; the service's subscriptions to it are gone.",
    body: Type.Object({ ...addressed('DEVICE_UNREGISTERED'), userNumber: UserNumber, deviceType: ref('DeviceType'), alias: Type.String() }),
  },
  {
    pushType: 'DEVICE_ALIAS_CHANGED', kind: 'push',
    summary: 'Such a device was renamed.',
    body: Type.Object({ ...addressed('DEVICE_ALIAS_CHANGED'), userNumber: UserNumber, alias: Type.String({ description: 'The new alias.' }) }),
  },
  {
    pushType: 'DEVICE_PUSH', kind: 'push',
    summary: "The device raised a notification code of its profile's notification.push, and a user of the service subscribed push for it.",
    body: Type.Object({ ...addressed('DEVICE_PUSH'), pushCode: Type.String({ examples: ['WASHING_IS_COMPLETE'] }), deviceType: ref('DeviceType'), userList: UserList }),
  },
  {
    pushType: 'DEVICE_STATUS', kind: 'event',
    summary: "The device's status changed while the service holds an unexpired event subscription; sent to the event callback URL.",
    body: Type.Object({
      ...addressed('DEVICE_STATUS'),
      deviceType: ref('DeviceType'),
      report: Type.Unsafe<unknown>({ description: 'Only the changed part, in status shape.', ...componentRef('DeviceStatus') }),
      userList: UserList,
    }),
  },
];

/** `DEVICE_ALIAS_CHANGED` → `DeviceAliasChangedMessage`. */
function componentName(pushType: PushType): string {
  return `${pascalCase(pushType)}Message`;
}

const signatureHeader = (name: string, description: string) => ({ in: 'header', name, required: true, schema: { type: 'string' }, description });

/** The named message bodies, as components. */
export function messageComponents(): Record<string, TSchema> {
  return Object.fromEntries(MESSAGES.map(({ pushType, kind, body }) => [
    componentName(pushType),
    Type.Object({ messageId: MessageId, timestamp: Timestamp, [kind]: body }, { title: componentName(pushType) }),
  ]));
}

/** The `webhooks` section: one POST per message type, to the callback URL (the event callback URL for DEVICE_STATUS). */
export function webhooksSection(): Record<string, unknown> {
  return Object.fromEntries(MESSAGES.map(({ pushType, kind, summary }) => [pushType, {
    post: {
      operationId: `on${componentName(pushType).replace(/Message$/, '')}`,
      summary,
      description: `POSTed to the service's ${kind === 'event' ? 'eventCallbackUrl (else its callbackUrl)' : 'callbackUrl'}; signed per Standard Webhooks with the service's webhook secret. Any 2xx within the attempt timeout acknowledges it; anything else is retried on the delivery schedule, in order per device.`,
      // The receiver authenticates the sender by the signature, not by a credential of the caller.
      security: [],
      parameters: [
        signatureHeader('webhook-id', 'The messageId, the same on every retry: deduplicate by it.'),
        signatureHeader('webhook-timestamp', 'Unix seconds of this attempt.'),
        signatureHeader('webhook-signature', 'Space-separated `v1,<base64 HMAC-SHA256 of id.timestamp.body>`, one per current secret.'),
        signatureHeader('webhook-sequence', 'Per (service, device), increasing in the order the messages occurred.'),
      ],
      requestBody: { required: true, content: { 'application/json': { schema: componentRef(componentName(pushType)) } } },
      responses: {
        '200': { description: 'Any 2xx: received.' },
        '410': { description: 'Gone: the endpoint is disabled; its messages are held until it is enabled again.' },
        default: { description: 'Anything else (3xx included), or no answer in time: the message is retried.' },
      },
    },
  }]));
}
