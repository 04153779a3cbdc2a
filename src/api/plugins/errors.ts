/**
 * Every answer is an envelope (DESIGN A.3, J): errors of our own, schema and body errors of Fastify,
 * unknown paths (1305, 404), wrong methods (1305, 405), internal faults (2000, no stack traces), and
 * the refusals that come before any route: a path that is not valid percent-encoding, a request
 * without Host, a CONNECT, an Expect other than 100-continue, and requests Node's HTTP parser gives
 * up on (malformed request lines and headers, a head over 64 KiB, a client too slow).
 */
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { ConnectionError, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, fail, type ErrorCode } from '../../errors.js';
import { newMessageId, type Clock } from '../../ids.js';
import { quote } from '../checks.js';
import { envelopeMessageId, failure, requestMessageId } from '../envelope.js';

export interface ValidationIssue {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

/** A readable message for the first schema violation, naming the field and what it must be. */
export function describeValidation(issue: ValidationIssue, context: string): { code: ErrorCode; message: string } {
  const field = issue.instancePath.replace(/^\//, '').replaceAll('/', '.') || context;
  if (issue.keyword === 'required') {
    return { code: '1101', message: `${field === context ? '' : `${field}.`}${String(issue.params.missingProperty)} is missing.`.replace(/^\./, '') };
  }
  if (issue.keyword === 'additionalProperties') {
    return { code: '1102', message: `${field === context ? context : field} may not contain ${JSON.stringify(issue.params.additionalProperty)}.` };
  }
  if (issue.keyword === 'enum' || issue.keyword === 'anyOf' || issue.keyword === 'const') {
    const allowed = (issue.params.allowedValues as unknown[] | undefined)?.join(', ');
    return { code: '1102', message: allowed ? `${field} must be one of ${allowed}.` : `${field} has a value that is not permitted.` };
  }
  if (issue.keyword === 'type' && issue.instancePath === '') {
    return { code: '1000', message: `The ${context} must be a JSON ${String(issue.params.type)}.` };
  }
  return { code: '1102', message: `${field} ${issue.message ?? 'is not permitted'}.` };
}

/** Maps whatever was thrown to the envelope's code, message and HTTP status. */
export function toApiError(error: FastifyError | ApiError | Error): ApiError {
  if (error instanceof ApiError) return error;
  const fastifyError = error as FastifyError & { validation?: ValidationIssue[]; validationContext?: string };
  if (fastifyError.validation?.[0]) {
    const { code, message } = describeValidation(fastifyError.validation[0], fastifyError.validationContext ?? 'body');
    return fail(code, message);
  }
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return fail('1102', 'The body is larger than 64 KiB.', { httpStatus: 413 });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return fail('1000', 'A request with a body must have content-type application/json.');
    default:
      if (fastifyError.statusCode !== undefined && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
        return fail('1000', `The request is malformed: ${fastifyError.message}`);
      }
      return fail('2000', 'Internal error.');
  }
}

function sendError(request: FastifyRequest, reply: FastifyReply, error: ApiError, clock: Clock): FastifyReply {
  const messageId = requestMessageId(request);
  return reply.code(error.httpStatus).headers(error.headers).send(failure(messageId, error.code, error.message, clock));
}

/** A path for a message, cut short: a path may be as long as the 64 KiB head. */
function shortPath(path: string): string {
  return path.length > 100 ? `${path.slice(0, 100)}…` : path;
}

/** The answer to a request Node's HTTP parser gave up on: the head too large (431), too slow (408), or malformed (400). */
export function clientErrorRefusal(error: { code?: string; reason?: string; message: string }): ApiError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      // 1000, not 1216: the parser stops counting before it knows which header (or the request line) overflowed.
      return fail('1000', 'The request line and headers are larger than 64 KiB.', { httpStatus: 431 });
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return fail('1000', 'The request did not arrive in time.', { httpStatus: 408 });
    case 'HPE_PAUSED_H2_UPGRADE':
      return fail('1000', 'HTTP/2 is not served here: use HTTP/1.1.');
    default:
      return fail('1000', `The request is not valid HTTP/1.1: ${error.reason ?? error.message}.`);
  }
}

/** An envelope as raw HTTP/1.1, for answers written where Fastify has no reply; the connection closes after it. */
function rawEnvelope(error: ApiError, messageId: string, clock: Clock): string {
  const body = JSON.stringify(failure(messageId, error.code, error.message, clock));
  const headers = { ...error.headers, 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(body)), connection: 'close' };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  return `HTTP/1.1 ${error.httpStatus} ${STATUS_CODES[error.httpStatus]}\r\n${lines}\r\n${body}`;
}

/**
 * Fastify's `clientErrorHandler`: the envelope instead of Fastify's own JSON, on the socket, as no
 * request was parsed. When the bytes that failed came after a whole request still being answered
 * (pipelined), that answer goes first: written at once, the refusal would read as the earlier
 * request's answer, though the earlier request went through.
 */
export function clientErrorHandler(clock: Clock): (error: ConnectionError, socket: Socket) => void {
  return (error, socket) => {
    const refuse = () => {
      if (socket.writable) socket.write(rawEnvelope(clientErrorRefusal(error as ConnectionError & { reason?: string }), newMessageId(), clock));
      socket.destroy();
    };
    // A reset connection has no one to answer.
    if (error.code === 'ECONNRESET') return void socket.destroy();
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    // The bytes that failed follow a whole request still being answered: that answer goes first.
    if (inFlight?.req.complete && !inFlight.writableFinished) inFlight.once('close', refuse);
    // They belong to the request being answered, whose answer has begun: a second one cannot follow (as Node's default).
    else if (inFlight?.headersSent) socket.destroy();
    else refuse();
  };
}

/** The server's 'connect' listener: a tunnel is not served here (1305, 405), where Node would close without a word. */
export function connectRefusal(clock: Clock): (request: IncomingMessage, socket: Duplex) => void {
  return (request, socket) => {
    const error = fail('1305', 'Method CONNECT is not allowed: this server is not a proxy.', { httpStatus: 405 });
    socket.write(rawEnvelope(error, envelopeMessageId(request.headers['x-message-id']), clock));
    socket.destroy();
  };
}

/** The server's 'checkExpectation' listener: an Expect other than 100-continue (417, 1216), where Node would answer a bare 417. */
export function expectationRefusal(clock: Clock): (request: IncomingMessage, response: ServerResponse) => void {
  return (request, response) => {
    const error = fail('1216', `Header expect may only be 100-continue; got ${quote(String(request.headers.expect))}.`, { httpStatus: 417 });
    const body = JSON.stringify(failure(envelopeMessageId(request.headers['x-message-id']), error.code, error.message, clock));
    response.writeHead(error.httpStatus, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) }).end(body);
  };
}

/** Fastify's `frameworkErrors`: the router's refusals before any route, such as a path that is not valid percent-encoding. */
export function frameworkErrorHandler(clock: Clock): (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void {
  return (error, request, reply) => {
    const refusal = error.code === 'FST_ERR_BAD_URL'
      ? fail('1000', `The path ${shortPath(request.url.split('?')[0] ?? '')} is not valid percent-encoding.`)
      : toApiError(error);
    sendError(request, reply, refusal, clock);
  };
}

/** The pattern of one part of a route's URL: a `:parameter`, the `*` wildcard, or literal text. */
function routePattern(part: string): string {
  if (part === '*') return '.*';
  if (part.startsWith(':')) return '[^/]+';
  return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Answers 1305 for a path no route has (404) or a method its routes do not take (405); a not-found handler. */
export type NoRouteHandler = (request: FastifyRequest, reply: FastifyReply) => FastifyReply;

/**
 * Installs the error handler, the Host check and the 404/405 answers, and returns the not-found
 * handler for encapsulated plugins (the admin API) to set as their own. `routes` collects the
 * method and pattern of every route.
 */
export function installErrorHandling(app: FastifyInstance, clock: Clock): NoRouteHandler {
  const routes: { method: string; pattern: RegExp }[] = [];
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    // The paths the router takes, no more: /users/ is no path (404), not /users with a method to name.
    // A parameter is one segment (not an empty one), the wildcard anything, every other character itself (`.` too).
    const pattern = new RegExp(`^${route.url.split(/(:[^/]+|\*)/).map(routePattern).join('')}$`);
    for (const method of methods) routes.push({ method, pattern });
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const apiError = toApiError(error);
    if (apiError.httpStatus === 500) request.log.error({ err: error, messageId: requestMessageId(request) }, 'internal error');
    return sendError(request, reply, apiError, clock);
  });

  // Draining (DESIGN E): a request that comes on a connection still open is refused here, where Fastify's own 503 is no envelope.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });

  // Node answers an HTTP/1.1 request without Host with a bare 400 (RFC 9112, 3.2); with requireHostHeader off, this is ours.
  app.addHook('onRequest', (request, _reply, done) => {
    if (closing) done(fail('2000', 'The server is shutting down: send the request again.', { httpStatus: 503 }));
    else if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) done(fail('1000', 'Header Host is missing: HTTP/1.1 requires it.'));
    else done();
  });

  const noRoute: NoRouteHandler = (request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    // A route that takes this method and path sent it here itself (a file under /docs/* it has not): no such path.
    const allowed = [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))];
    const error = allowed.length && !allowed.includes(request.method)
      ? fail('1305', `Method ${request.method} is not allowed on ${shortPath(path)}; use ${allowed.join(', ')}.`, { httpStatus: 405, headers: { allow: allowed.join(', ') } })
      : fail('1305', `There is no ${shortPath(path)}.`, { httpStatus: 404 });
    return sendError(request, reply, error, clock);
  };
  app.setNotFoundHandler(noRoute);
  return noRoute;
}
