/** One error class for every refusal: the server's envelope errors and the client's own failures. */

/**
 * Codes the client gives failures that never reached an answer from the server: a timeout, a network
 * failure, or an answer that is not the interface's envelope (a proxy's error page, say).
 */
export type ClientErrorCode = 'TIMEOUT' | 'NETWORK' | 'BAD_RESPONSE';

export interface ApplianceCloudErrorInit {
  code: string;
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
  readonly code: string;
  readonly httpStatus: number | undefined;
  readonly messageId: string;
  readonly retryAfterSeconds: number | undefined;

  constructor(init: ApplianceCloudErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.httpStatus = init.httpStatus;
    this.messageId = init.messageId;
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

/** Whether `error` is an {@link ApplianceCloudError}, optionally of one code: `isApplianceCloudError(e, '1222')`. */
export function isApplianceCloudError(error: unknown, code?: string): error is ApplianceCloudError {
  return error instanceof ApplianceCloudError && (code === undefined || error.code === code);
}
