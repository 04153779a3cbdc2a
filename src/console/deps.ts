/** What every console route file is given: the domain, and the viewer of a request. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ContextWithSimulator } from '../context.js';
import { ApiError } from '../errors.js';
import type { Viewer } from './layout.js';
import type { DeviceWatch } from './live.js';

export interface ConsoleDeps {
  ctx: ContextWithSimulator;
  /** The signed-in operator of a request (the hook in index.ts let it through). */
  viewer(request: FastifyRequest): Viewer;
  /** When the request's session ends (epoch ms): an event stream it opened ends then too. */
  sessionEndsAt(request: FastifyRequest): number;
  /** Leaves a message for the next page of the request's session (session.ts, Flashes). */
  leaveFlash(request: FastifyRequest, message: string): Promise<void>;
  /** What the action that redirected here came to, once; null when nothing. */
  takeFlash(request: FastifyRequest): Promise<Outcome | null>;
  watch: DeviceWatch;
  /** Enders of the open event streams, called when the server closes. */
  streams: Set<() => void>;
}

/** What a form's action came to: done (with what to say), or refused with the domain's code and message. */
export type Outcome = { ok: true; message: string } | { ok: false; code: string; message: string };

/** Runs a domain call for a form; its refusal (an ApiError) becomes the outcome shown, anything else is thrown. */
export async function outcomeOf(work: () => Promise<string>): Promise<Outcome> {
  try {
    return { ok: true, message: await work() };
  } catch (error) {
    if (error instanceof ApiError) return { ok: false, code: error.code, message: error.message };
    throw error;
  }
}

/**
 * Answers a form. Done: 303 to `page`, the page the action belongs to, which shows the message once
 * (Post/Redirect/Get: reloading that page does not act again). Refused: the page drawn with the refusal
 * and what was typed, as a 400 so that scripts can tell; reloading it re-runs only a refusal.
 */
export async function answerForm(
  deps: ConsoleDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  outcome: Outcome,
  page: string,
  refusedPage: () => Promise<string>,
): Promise<FastifyReply> {
  if (!outcome.ok) return reply.code(400).type('text/html; charset=utf-8').send(await refusedPage());
  await deps.leaveFlash(request, outcome.message);
  return reply.redirect(page, 303);
}

/** A form as index.ts parses it: each name with its values in order. */
export type Form = Record<string, string[]>;

/** Every value of a form field (a multiple select sends several). */
export function fields(body: unknown, name: string): string[] {
  const values = (body as Form | undefined)?.[name];
  return Array.isArray(values) ? values : [];
}

/** The first value of a form field, or undefined. */
export function field(body: unknown, name: string): string | undefined {
  return fields(body, name)[0];
}
