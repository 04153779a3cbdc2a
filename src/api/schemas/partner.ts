/** Request and response schemas of the partner interface (DESIGN A.5), declared once for validation and OpenAPI. */
import { Type } from 'typebox';
import { DEVICE_TYPES } from '../../catalog/index.js';
import type { ErrorCode } from '../../errors.js';

/**
 * The three credentials of every partner operation, as the security schemes of the published document
 * (src/docs/document.ts): documented there, not as header parameters, so that "Try it out" sends them.
 * PartnerHeaders still declares them; checkHeaders refuses their absence before any schema runs.
 */
export const PARTNER_SECURITY = [{ accessToken: [], serviceId: [], serviceKey: [] }];

export const PartnerHeaders = Type.Object({
  authorization: Type.String({ description: "The user's access token, bare or as `Bearer <token>`." }),
  'x-country-code': Type.String({ description: "ISO 3166-1 alpha-2, upper case; a country of this deployment's region.", examples: ['KR'] }),
  'x-message-id': Type.String({
    description: '22 URL-safe base64 characters (a UUID\'s 16 bytes, unpadded), echoed as messageId; fresh per request ("Try it out" sends a new one in place of this example).',
    examples: ['kVuV69kGTS25FUs1wrkECQ'],
  }),
  'x-service-id': Type.String({ description: 'The calling service.' }),
  'x-service-key': Type.String({ description: "The calling service's key." }),
});

export const ControlHeaders = Type.Object({
  ...PartnerHeaders.properties,
  'x-conditional-control': Type.Optional(Type.String({
    enum: ['true', 'false'],
    description: 'With `true`, the command is refused (2301–2305) when the device cannot apply it now.',
  })),
});

export const DeviceIdParams = Type.Object({
  deviceId: Type.String({ description: 'The device id: 1 to 128 of A-Z, a-z, 0-9, _ and -.' }),
});

export const DeviceListItem = Type.Object({
  deviceId: Type.String(),
  deviceInfo: Type.Object({
    deviceType: Type.String({ enum: [...DEVICE_TYPES], examples: ['DEVICE_WASHER'] }),
    modelName: Type.String(),
    alias: Type.String(),
    reportable: Type.Boolean({ description: 'This service holds an unexpired event subscription for the device.' }),
    groupId: Type.Optional(Type.String({ description: 'Washtower halves only: the pair shares it.' })),
  }),
});

export const Profile = Type.Unknown({ description: 'The device profile in the ThinQ grammar: property, notification, error, extensionProperty.' });
export const Status = Type.Unknown({ description: "The device's full status in status shape (an array per location for washer and oven)." });
export const ControlCommand = Type.Unknown({
  description: 'A partial status holding only writable properties plus addressing keys (locationName, location.locationName, unit).',
  examples: [{ operation: { washerOperationMode: 'START' }, location: { locationName: 'MAIN' } }],
});
export const Empty = Type.Object({});

export const EventSubscribeBody = Type.Object(
  {
    expire: Type.Optional(Type.Object(
      {
        unit: Type.Optional(Type.String({ enum: ['MINUTE', 'HOUR', 'DAY'], description: 'Default HOUR.' })),
        timer: Type.Optional(Type.Integer({ minimum: 1, description: 'Default 1; the whole expiry is at most 4464 hours.' })),
      },
      { additionalProperties: false },
    )),
  },
  { additionalProperties: false },
);

export const EventSubscriptionItem = Type.Object({
  deviceId: Type.String(),
  expiresAt: Type.String({ description: 'ISO 8601 UTC', examples: ['2026-01-01T00:00:00.000Z'] }),
});

/** Codes every partner operation can answer with, from the header, service and token checks. */
export const COMMON_CODES: readonly ErrorCode[] = ['1000', '1101', '1104', '1216', '1103', '1301', '1307', '1202', '1306', '2000'];
/** Codes of an operation a token's scopes may not cover (DESIGN G): all but GET /users and DELETE /user/service. */
export const SCOPED_CODES: readonly ErrorCode[] = [...COMMON_CODES, '1308'];
/** Codes of the device checks of every operation on a device id. */
export const DEVICE_CODES: readonly ErrorCode[] = [...SCOPED_CODES, '1224', '1210', '1205', '1221'];
