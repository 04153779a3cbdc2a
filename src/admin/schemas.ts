/** Request and response schemas of the admin API (DESIGN D), declared once for validation, types and OpenAPI. */
import { Type, type TSchema } from 'typebox';
import { DEVICE_TYPES } from '../catalog/index.js';
import type { ErrorCode } from '../errors.js';
import type { MessageStatus } from '../core/model.js';
import { Envelope, errorResponses } from '../api/envelope.js';

/** Codes every admin call can answer with: the admin token, the content type, the body, internal faults. */
export const ADMIN_CODES: readonly ErrorCode[] = ['1000', '1101', '1102', '1301', '2000'];

/**
 * A route's schema: its operationId and summary, its parts (params, querystring, body), the tag and security of the admin API,
 * the success envelope around `response`, and the errors of ADMIN_CODES plus `codes`.
 */
export function adminSchema<Parts extends object>(operationId: string, summary: string, parts: Parts, response: TSchema, codes: readonly ErrorCode[] = []) {
  return {
    operationId,
    summary,
    tags: ['admin'],
    security: [{ admin: [] }],
    ...parts,
    response: { 200: Envelope(response), ...errorResponses([...new Set([...ADMIN_CODES, ...codes])]) },
  };
}

const DeviceType = Type.String({ enum: [...DEVICE_TYPES], description: 'A device type of the catalog.' });
const Url = Type.String({
  description: 'An absolute http(s) URL; in phase OP an https URL that names no loopback, private or link-local address (else 1102).',
});
const NullableUrl = Type.Union([Url, Type.Null()]);
const Iso = Type.String({ description: 'ISO 8601 UTC', examples: ['2026-01-01T00:00:00.000Z'] });
const Alias = Type.String({ minLength: 1, maxLength: 100, description: 'The name the user gave the device.' });

export const Empty = Type.Object({});

// Services

export const ServiceIdParams = Type.Object({ serviceId: Type.String() });

const RedirectUris = Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), {
  maxItems: 20,
  description: 'Where the authorization server (/oauth) may send the owner back, matched exactly; http://127.0.0.1:* and localhost only in phase QA.',
});

export const NewServiceBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    allowedDevices: Type.Array(DeviceType, { description: 'The device types the service may see and operate.' }),
    callbackUrl: Type.Optional(NullableUrl),
    eventCallbackUrl: Type.Optional(Type.Union([Url, Type.Null()], { description: 'Where DEVICE_STATUS events go; default the callbackUrl.' })),
    redirectUris: Type.Optional(RedirectUris),
  },
  { additionalProperties: false },
);

export const ServicePatchBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    allowedDevices: Type.Optional(Type.Array(DeviceType)),
    callbackUrl: Type.Optional(NullableUrl),
    eventCallbackUrl: Type.Optional(NullableUrl),
    redirectUris: Type.Optional(RedirectUris),
    enabled: Type.Optional(Type.Boolean({
      description: 'A disabled service is refused with 1301 and its messages are held. `true` also enables a delivery endpoint disabled by 410 Gone or five days of failures; held messages then go out, in order.',
    })),
  },
  { additionalProperties: false },
);

export const NewServiceResponse = Type.Object({
  serviceId: Type.String(),
  serviceKey: Type.String({ description: 'Shown once: only its hash is stored.' }),
  webhookSecret: Type.String({ description: 'Shown once here and at each rotation: signs the deliveries.', examples: ['whsec_…'] }),
});

/** A service as the admin API shows it: never its key hash or webhook secrets. */
export const ServiceView = Type.Object({
  serviceId: Type.String(),
  name: Type.String(),
  allowedDevices: Type.Array(Type.String()),
  callbackUrl: Type.Union([Type.String(), Type.Null()]),
  eventCallbackUrl: Type.Union([Type.String(), Type.Null()]),
  redirectUris: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  createdAt: Iso,
});

export const RotateSecretBody = Type.Object(
  {
    expirePreviousNow: Type.Optional(Type.Boolean({
      description: 'Retire the previous secret at once (it leaked): deliveries carry only the new signature. Default false: it signs for 24 h more.',
    })),
  },
  { additionalProperties: false },
);

export const RotatedSecret = Type.Object({
  webhookSecret: Type.String({ description: 'The new current secret; the previous one keeps signing for 24 h unless retired at once.' }),
});

// Users and tokens

export const UserParams = Type.Object({ userNumber: Type.String() });

export const NewUserBody = Type.Object(
  {
    countryCode: Type.String({ description: 'ISO 3166-1 alpha-2, upper case.', examples: ['KR'] }),
    userNumber: Type.Optional(Type.String({ description: '1 to 64 of A-Z, a-z, 0-9, _ and -; generated when absent.' })),
    email: Type.Optional(Type.String({ maxLength: 254, description: "The owner's login to /oauth and /account (with password)." })),
    password: Type.Optional(Type.String({ maxLength: 1024, description: 'At least 8 characters; stored as a scrypt hash only.' })),
  },
  { additionalProperties: false },
);

export const UserView = Type.Object({ userNumber: Type.String(), countryCode: Type.String(), email: Type.Optional(Type.String()) });

export const NewTokenBody = Type.Object(
  {
    serviceId: Type.String(),
    expiresInSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 315_360_000, description: 'Default 86400 (one day); at most ten years.' })),
  },
  { additionalProperties: false },
);

export const TokenView = Type.Object({ accessToken: Type.String(), expiresAt: Iso });

// Devices

export const DeviceParams = Type.Object({ deviceId: Type.String() });
export const UserDeviceParams = Type.Object({ userNumber: Type.String(), deviceId: Type.String() });

export const NewDeviceBody = Type.Object(
  {
    deviceType: DeviceType,
    modelName: Type.Optional(Type.String({ description: "A model of the type in the catalog; the type's default when absent." })),
    alias: Alias,
    deviceId: Type.Optional(Type.String({ description: '1 to 128 of A-Z, a-z, 0-9, _ and -; generated when absent.' })),
    groupId: Type.Optional(Type.String({ minLength: 1, description: 'Washtower halves only: give both halves the same one.' })),
    virtual: Type.Optional(Type.Boolean({ description: 'Attach a simulated appliance, online at once (default true in sandbox, false in serve).' })),
  },
  { additionalProperties: false },
);

export const NewDeviceResponse = Type.Object({
  deviceId: Type.String(),
  deviceSecret: Type.String({ description: 'Shown once: the MQTT password of the device.' }),
  deviceType: Type.String(),
  modelName: Type.String(),
  alias: Type.String(),
  groupId: Type.Optional(Type.String()),
  virtual: Type.Boolean(),
  online: Type.Boolean(),
});

/** A device as the admin API shows it: never its secret hash. */
export const DeviceView = Type.Object({
  deviceId: Type.String(),
  deviceType: Type.String(),
  modelName: Type.String(),
  alias: Type.String(),
  groupId: Type.Optional(Type.String()),
  virtual: Type.Boolean(),
  online: Type.Boolean(),
  userNumbers: Type.Array(Type.String(), { description: 'The owner first, then the users it is shared with.' }),
  createdAt: Iso,
});

export const DeviceStateView = Type.Object({
  device: DeviceView,
  status: Type.Unknown({ description: "The device's full status." }),
  online: Type.Boolean(),
  version: Type.Integer({ description: 'Increments on every change of status.' }),
});

export const RenameBody = Type.Object({ alias: Alias }, { additionalProperties: false });

export const ReportBody = Type.Unknown({
  description: "A partial status in status shape; it must fit the profile's readable values, else 1102.",
  examples: [{ airFlow: { windStrength: 'HIGH' } }],
});

export const ControlBody = Type.Unknown({
  description: "A control command as the partner interface takes it: a partial status of the profile's writable values (else 1102, 2207).",
  examples: [{ airFlow: { windStrength: 'HIGH' } }],
});

export const ControlQuery = Type.Object({
  conditional: Type.Optional(Type.Enum(['true', 'false'], { description: 'As x-conditional-control: check the conditions of A.7 first (2301–2305).' })),
});

export const ControlledView = Type.Object({
  status: Type.Unknown({ description: "The device's full status after the command." }),
  version: Type.Integer(),
});

export const PushBody = Type.Object(
  { pushCode: Type.String({ description: "One of the profile's notification.push codes.", examples: ['WASHING_IS_COMPLETE'] }) },
  { additionalProperties: false },
);

export const ConnectionBody = Type.Object({ online: Type.Boolean() }, { additionalProperties: false });

export const VersionView = Type.Object({ version: Type.Integer() });

// Messages

export const MESSAGE_STATUSES = ['pending', 'delivering', 'delivered', 'failed', 'held'] as const satisfies readonly MessageStatus[];

export const MessagesQuery = Type.Object(
  {
    status: Type.Optional(Type.Enum(MESSAGE_STATUSES)),
    deviceId: Type.Optional(Type.String()),
    since: Type.Optional(Type.String({ description: 'ISO 8601; messages created at or after it. UTC when it has no zone.', examples: ['2026-01-01T00:00:00Z'] })),
    before: Type.Optional(Type.String({
      description: "The messageId of the previous page's last message; the listing goes on with the older ones after it (else 1102).",
      examples: ['AZt22qgAfweWfd92wkJ6Wg'],
    })),
    limit: Type.Optional(Type.String({ description: 'An integer from 1 to 1000; default 100.', examples: ['100'] })),
  },
  { additionalProperties: false },
);

export const MessageParams = Type.Object({ messageId: Type.String() });

export const PageQuery = Type.Object(
  {
    after: Type.Optional(Type.String({ description: 'The last id of the previous page; the listing starts after it.' })),
    limit: Type.Optional(Type.String({ description: 'An integer from 1 to 1000; default 100.', examples: ['100'] })),
  },
  { additionalProperties: false },
);

export const RecoverBody = Type.Object(
  { since: Type.String({ description: 'ISO 8601; failed messages created at or after it go back to pending.', examples: ['2026-01-01T00:00:00Z'] }) },
  { additionalProperties: false },
);

export const RecoverView = Type.Object({ resent: Type.Integer({ description: 'How many messages went back to pending.' }) });

const AttemptView = Type.Object({
  attempt: Type.Integer({ description: 'From 1.' }),
  startedAt: Iso,
  durationMs: Type.Number(),
  responseStatus: Type.Union([Type.Integer(), Type.Null()]),
  responseBody: Type.Union([Type.String(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
});

export const MessageView = Type.Object({
  messageId: Type.String(),
  deviceId: Type.String(),
  kind: Type.Enum(['push', 'event']),
  pushType: Type.String(),
  sequence: Type.Integer({ description: 'Per service and device, in the order the changes occurred.' }),
  status: Type.Enum(MESSAGE_STATUSES),
  createdAt: Iso,
  nextAttemptAt: Iso,
  deliveredAt: Type.Union([Iso, Type.Null()]),
  body: Type.Unknown({ description: 'The message as it is POSTed (DESIGN A.8), parsed.' }),
  attempts: Type.Array(AttemptView),
});
