/**
 * The response envelope of DESIGN A.3, and its schemas: every answer of the partner and admin
 * interfaces is `{messageId, timestamp, response}` or `{messageId, timestamp, error: {code, message}}`.
 */
import type { FastifyRequest } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { ERRORS, type ErrorCode } from '../errors.js';
import { formatTimestamp, isMessageId, newMessageId, type Clock } from '../ids.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The id the envelope gave a request without a well-formed x-message-id: its log line names it too (DESIGN E). */
    freshMessageId: string | null;
  }
}

/** The request's x-message-id when it is well formed, else a fresh one (the envelope's id is always valid). */
export function envelopeMessageId(header: string | string[] | undefined): string {
  return typeof header === 'string' && isMessageId(header) ? header : newMessageId();
}

/** `envelopeMessageId` of a request Fastify serves: a fresh one is kept, so that the answer and the log line share it. */
export function requestMessageId(request: FastifyRequest): string {
  const header = request.headers['x-message-id'];
  if (typeof header === 'string' && isMessageId(header)) return header;
  return (request.freshMessageId ??= newMessageId());
}

export function success<T>(messageId: string, response: T, clock: Clock): { messageId: string; timestamp: string; response: T } {
  return { messageId, timestamp: formatTimestamp(clock.now()), response };
}

/**
 * `success` as JSON text around a response that already is JSON text (a stored status): the same
 * bytes as serializing `success(messageId, JSON.parse(responseJson), clock)`, without the parse.
 */
export function successJson(messageId: string, responseJson: string, clock: Clock): string {
  return `{"messageId":${JSON.stringify(messageId)},"timestamp":"${formatTimestamp(clock.now())}","response":${responseJson}}`;
}

export function failure(messageId: string, code: ErrorCode, message: string, clock: Clock) {
  return { messageId, timestamp: formatTimestamp(clock.now()), error: { code, message } };
}

const MessageId = Type.String({ pattern: '^[A-Za-z0-9_-]{22}$', description: 'Echo of x-message-id', examples: ['kVuV69kGTS25FUs1wrkECQ'] });
const Timestamp = Type.String({ description: 'UTC, ISO 8601 without zone, microseconds', examples: ['2025-01-09T04:24:35.540658'] });

export const ErrorEnvelope = Type.Object(
  {
    messageId: MessageId,
    timestamp: Timestamp,
    error: Type.Object({ code: Type.String({ pattern: '^[0-9]{4}$' }), message: Type.String() }),
  },
  { $id: 'ErrorEnvelope' },
);

export function Envelope<T extends TSchema>(response: T) {
  return Type.Object({ messageId: MessageId, timestamp: Timestamp, response });
}

/** OpenAPI responses for the error codes a route can produce, grouped by HTTP status, built from the one table. */
export function errorResponses(codes: readonly ErrorCode[]): Record<number, TSchema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERRORS[code].http;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<number, TSchema> = {};
  for (const [status, list] of byStatus) {
    const description = list.map((code) => `\`${code}\` ${ERRORS[code].when}`).join(' ');
    responses[status] = Type.Ref('ErrorEnvelope', { description });
  }
  return responses;
}
