/** A service's messages and their delivery attempts: list, resend one, recover the failed ones (DESIGN C, D). */
import { Type } from 'typebox';
import { quote } from '../api/checks.js';
import type { AppContext } from '../context.js';
import { fail } from '../errors.js';
import { answer, type AdminApp } from './common.js';
import { adminSchema, Empty, MessageParams, MessagesQuery, MessageView, RecoverBody, RecoverView, ServiceIdParams } from './schemas.js';
import { messageView } from './views.js';

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** Whether the day exists in its month: Date.parse takes 2026-02-30 for March 2. */
function isCalendarDay(year: number, month: number, day: number): boolean {
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, takes years 0 to 99 as they are, not as 1900 to 1999.
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** An ISO 8601 date or date-time as epoch ms; one without a zone is UTC, like the envelope's timestamps. */
export function parseSince(raw: string): number {
  // ISO 8601 allows a lower-case t and z, but Date.parse reads them by its legacy rules, without the UTC below.
  const text = raw.toUpperCase();
  const match = ISO_8601.exec(text);
  const valid = match !== null && isCalendarDay(Number(match[1]), Number(match[2]), Number(match[3]));
  // Date.parse reads a zone-less date-time as local time; the API means UTC.
  const epochMs = valid ? Date.parse(text.includes('T') && !match[4] ? `${text}Z` : text) : Number.NaN;
  if (Number.isNaN(epochMs)) throw fail('1102', `since must be an ISO 8601 date-time such as 2026-01-01T00:00:00Z; got ${quote(raw)}.`);
  return epochMs;
}

/** The query's limit: declared a string (query values are not coerced), an integer from 1 to 1000. */
export function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_LIMIT;
  const limit = /^\d{1,4}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT)) throw fail('1102', `limit must be an integer from 1 to ${MAX_LIMIT}; got ${quote(raw)}.`);
  return limit;
}

export function messageRoutes(app: AdminApp, ctx: AppContext): void {
  const { accounts, clock } = ctx;

  app.get('/services/:serviceId/messages', {
    schema: adminSchema(
      'listServiceMessages', "List a service's messages with their delivery attempts",
      {
        description: 'Newest first, a page at a time: pass the last messageId of a page as `before` for the next, with the same filters. '
          + 'Filters: status, deviceId, since (ISO 8601), limit (1 to 1000, default 100).',
        params: ServiceIdParams,
        querystring: MessagesQuery,
      },
      Type.Array(MessageView),
      ['1305'],
    ),
  }, async (request) => {
    const { status, deviceId, since, before, limit } = request.query;
    const messages = await accounts.listMessages(request.params.serviceId, {
      ...(status !== undefined ? { status } : {}),
      ...(deviceId !== undefined ? { deviceId } : {}),
      ...(since !== undefined ? { since: parseSince(since) } : {}),
      ...(before !== undefined ? { before } : {}),
      limit: parseLimit(limit),
    });
    return answer(request, clock, messages.map(messageView));
  });

  app.post('/messages/:messageId/resend', {
    schema: adminSchema('resendMessage', 'Resend one message', { description: 'Puts it back to pending, due now, whatever its status.', params: MessageParams }, Empty, ['1305']),
  }, async (request) => {
    await accounts.resendMessage(request.params.messageId);
    return answer(request, clock, {});
  });

  app.post('/services/:serviceId/recover', {
    schema: adminSchema(
      'recoverDeliveries', 'Recover failed deliveries',
      { description: 'Puts every failed message of the service created since `since` back to pending.', params: ServiceIdParams, body: RecoverBody },
      RecoverView,
      ['1305'],
    ),
  }, async (request) => {
    const resent = await accounts.recoverFailed(request.params.serviceId, parseSince(request.body.since));
    return answer(request, clock, { resent });
  });
}
