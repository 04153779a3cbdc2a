/**
 * Every answer is an envelope (DESIGN A.3): errors of our own, schema and body errors of Fastify,
 * unknown paths (1305, 404), wrong methods (1305, 405) and internal faults (2000, no stack traces).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, fail, type ErrorCode } from '../../errors.js';
import type { Clock } from '../../ids.js';
import { envelopeMessageId, failure } from '../envelope.js';

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

/** A readable message for the first schema violation, naming the field and what it must be. */
function describeValidation(issue: ValidationIssue, context: string): { code: ErrorCode; message: string } {
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
  const messageId = envelopeMessageId(request.headers['x-message-id']);
  return reply.code(error.httpStatus).headers(error.headers).send(failure(messageId, error.code, error.message, clock));
}

/** Answers 1305 for a path no route has (404) or a method its routes do not take (405); a not-found handler. */
export type NoRouteHandler = (request: FastifyRequest, reply: FastifyReply) => FastifyReply;

/**
 * Installs the error handler and the 404/405 answers, and returns the not-found handler for
 * encapsulated plugins (the admin API) to set as their own. `routes` collects the method and
 * pattern of every route.
 */
export function installErrorHandling(app: FastifyInstance, clock: Clock): NoRouteHandler {
  const routes: { method: string; pattern: RegExp }[] = [];
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const pattern = new RegExp(`^${route.url.replace(/:[^/]+/g, '[^/]*').replace(/\*/g, '.*')}/?$`);
    for (const method of methods) routes.push({ method, pattern });
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const apiError = toApiError(error);
    if (apiError.code === '2000') request.log.error({ err: error, messageId: request.headers['x-message-id'] }, 'internal error');
    return sendError(request, reply, apiError, clock);
  });

  const noRoute: NoRouteHandler = (request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = [...new Set(routes.filter((r) => r.pattern.test(path) && r.method !== request.method).map((r) => r.method))];
    const error = allowed.length && !allowed.includes(request.method)
      ? fail('1305', `Method ${request.method} is not allowed on ${path}; use ${allowed.join(', ')}.`, { httpStatus: 405, headers: { allow: allowed.join(', ') } })
      : fail('1305', `There is no ${path}.`, { httpStatus: 404 });
    return sendError(request, reply, error, clock);
  };
  app.setNotFoundHandler(noRoute);
  return noRoute;
}
