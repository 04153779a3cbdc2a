/**
 * The error table of DESIGN A.4: the one source from which error responses, the OpenAPI
 * document and the docs are built. A test keeps it in step with reference/thinq/_api/error_codes.json.
 */
export const ERRORS = {
  '1000': { http: 400, name: 'BAD_REQUEST', when: 'Malformed JSON, wrong content type, or anything else malformed.' },
  '1101': { http: 400, name: 'MISSING_PARAMETERS', when: 'A mandatory header or body field is missing, or the control command is empty.' },
  '1102': { http: 400, name: 'UNACCEPTABLE_PARAMETERS', when: 'A body value is not permitted: out of range, not in the enum, wrong type, or a bad expire.' },
  '1103': { http: 401, name: 'INVALID_TOKEN', when: 'The access token is unknown, expired or revoked.' },
  '1104': { http: 400, name: 'INVALID_MESSAGE_ID', when: 'x-message-id is not 22 URL-safe base64 characters.' },
  '1202': { http: 404, name: 'NOT_REGISTERED_USER', when: 'The user is not (or no longer) connected to the calling service.' },
  '1204': { http: 404, name: 'NOT_SUBSCRIBED_EVENT', when: 'There is no event subscription for the device.' },
  '1205': { http: 404, name: 'NOT_REGISTERED_DEVICE', when: 'The device is not registered to this user.' },
  '1206': { http: 404, name: 'NOT_SUBSCRIBED_PUSH', when: 'There is no push subscription for the device.' },
  '1207': { http: 404, name: 'ALREADY_SUBSCRIBED_PUSH', when: 'The service already subscribed push for the device.' },
  '1210': { http: 404, name: 'NOT_REGISTERED_DEVICE_IN_SERVICE', when: 'A device operation came before this service called GET /devices for this user.' },
  '1216': { http: 400, name: 'INCORRECT_HEADER', when: 'A header value is not correct.' },
  '1221': { http: 406, name: 'NOT_SUPPORTED_PRODUCT', when: "The device's type is not in the service's allowedDevices." },
  '1222': { http: 416, name: 'NOT_CONNECTED_DEVICE', when: 'The device is not connected.' },
  '1224': { http: 404, name: 'INVALID_DEVICE_ID', when: 'The device id is malformed.' },
  '1301': { http: 401, name: 'INVALID_SERVICE_KEY', when: 'The service id is unknown or the service key is wrong.' },
  '1305': { http: 404, name: 'NOT_ALLOWED_API', when: 'No such path (404) or method (405).' },
  '1306': { http: 429, name: 'EXCEEDED_API_CALLS', when: 'The rate limit is exceeded.' },
  '1307': { http: 401, name: 'NOT_SUPPORTED_COUNTRY', when: "The country is not served by this deployment's region." },
  '1308': { http: 401, name: 'NO_CONTROL_AUTHORITY', when: "The token's scopes do not cover the operation (control without control, …)." },
  '1312': { http: 400, name: 'EXCEEDED_NUMBER_OF_EVENT_SUBSCRIPTION', when: 'Too many event subscriptions for this service and user.' },
  '2000': { http: 500, name: 'INTERNAL_SERVER_ERROR', when: 'Internal error.' },
  '2201': { http: 400, name: 'NOT_PROVIDED_FEATURE', when: 'The command controls a property the profile declares read-only.' },
  '2207': { http: 400, name: 'INVALID_COMMAND_ERROR', when: 'The command names a resource or property not in the profile, or the type has no writable property.' },
  '2208': { http: 400, name: 'FAIL_DEVICE_CONTROL', when: 'The device refused the command.' },
  '2209': { http: 400, name: 'DEVICE_RESPONSE_DELAY', when: 'The device did not answer within the control timeout.' },
  '2301': { http: 400, name: 'COMMAND_NOT_SUPPORTED_IN_REMOTE_OFF', when: 'Conditional control: remote control is off.' },
  '2302': { http: 400, name: 'COMMAND_NOT_SUPPORTED_IN_STATE', when: 'Conditional control: the command is not valid in the current run state.' },
  '2303': { http: 400, name: 'COMMAND_NOT_SUPPORTED_IN_ERROR', when: 'Conditional control: the device is in an error state.' },
  '2304': { http: 400, name: 'COMMAND_NOT_SUPPORTED_IN_POWER_OFF', when: 'Conditional control: the device is powered off and the command does not power it on.' },
  '2305': { http: 400, name: 'COMMAND_NOT_SUPPORTED_IN_MODE', when: 'Conditional control: the command is not valid in the current mode.' },
} as const satisfies Record<string, { http: number; name: string; when: string }>;

export type ErrorCode = keyof typeof ERRORS;

/** An error the interface answers with its envelope; `message` names what was wrong. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  /** Overrides the table's HTTP status where a row has two (1305: 404 or 405). */
  readonly httpStatus: number;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: { httpStatus?: number; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.httpStatus = options.httpStatus ?? ERRORS[code].http;
    this.headers = options.headers ?? {};
  }
}

/** Shorthand used at every check: `throw fail('1205', 'Device x is not registered to this user.')`. */
export function fail(code: ErrorCode, message: string, options?: { httpStatus?: number; headers?: Record<string, string> }): ApiError {
  return new ApiError(code, message, options);
}

/** A result of a pure check: nothing wrong, or the code and message to answer with. */
export type Refusal = { code: ErrorCode; message: string };
