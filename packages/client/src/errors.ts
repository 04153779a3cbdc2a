/** One error class for every refusal: the server's envelope errors and the client's own failures. */
import { ERROR_CODE_NAMES, type ApiErrorCode } from './generated/errors.js';

export { ERROR_CODE_NAMES, type ApiErrorCode };

/**
 * Codes the client gives failures that never reached an answer from the server: a timeout, a network
 * failure, an answer that is not the interface's envelope (a proxy's error page, say), or the
 * `tokenProvider` failing (its error as `cause`: an `OAuthError` `invalid_grant` once the owner unlinked).
 */
export type ClientErrorCode = 'TIMEOUT' | 'NETWORK' | 'BAD_RESPONSE' | 'TOKEN';

/** Any code an {@link ApplianceCloudError} carries; a newer server may answer codes this version does not name. */
export type ErrorCode = ApiErrorCode | ClientErrorCode | (string & {});

export interface ApplianceCloudErrorInit {
  code: ErrorCode;
  message: string;
  /** The HTTP status, when the server answered. */
  httpStatus?: number;
  /** The `x-message-id` of the request that failed (the envelope's `messageId` echoes it). */
  messageId: string;
  /** Seconds the server asked to wait (429), when it said. */
  retryAfterSeconds?: number;
  cause?: unknown;
}

/**
 * A refused or failed call. `code` is the interface's 4-digit code (DESIGN A.4, e.g. `"1222"` when the
 * device is offline) or a {@link ClientErrorCode}; `message` is the server's own sentence.
 */
export class ApplianceCloudError extends Error {
  override readonly name = 'ApplianceCloudError';
  readonly code: ErrorCode;
  /** The code's name in LG's table (`NOT_CONNECTED_DEVICE` for `1222`), or the client code itself. */
  readonly codeName: string;
  readonly httpStatus: number | undefined;
  readonly messageId: string;
  readonly retryAfterSeconds: number | undefined;

  constructor(init: ApplianceCloudErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.codeName = (ERROR_CODE_NAMES as Record<string, string>)[init.code] ?? init.code;
    this.httpStatus = init.httpStatus;
    this.messageId = init.messageId;
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

/** Whether `error` is an {@link ApplianceCloudError}, optionally of one code: `isApplianceCloudError(e, '1222')`. */
export function isApplianceCloudError(error: unknown, code?: ApiErrorCode | ClientErrorCode): error is ApplianceCloudError {
  return error instanceof ApplianceCloudError && (code === undefined || error.code === code);
}
