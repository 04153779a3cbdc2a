/**
 * A service's delivery log (DESIGN H): each message with its body, the signature headers it is sent
 * with, its webhook-sequence and every attempt; resend one, recover the failed ones since a time —
 * through Accounts, as the admin API's /messages calls do.
 */
import type { FastifyInstance } from 'fastify';
import { parseSince } from '../admin/messages.js';
import type { MessageWithAttempts } from '../core/accounts.js';
import { signatureHeaders } from '../delivery/sign.js';
import type { MessageStatus, Service } from '../core/model.js';
import { html, type Html } from '../web/html.js';
import { answerForm, field, outcomeOf, type ConsoleDeps, type Outcome } from './deps.js';
import { consolePage, csrf, outcomeBox, when, type Viewer } from './layout.js';

const STATUSES: MessageStatus[] = ['pending', 'delivering', 'delivered', 'failed', 'held'];
const STATUS_CLASS: Record<MessageStatus, string> = { pending: 'warn', delivering: 'warn', delivered: 'ok', failed: 'bad', held: 'warn' };
const EXCERPT = 300;
/** Messages a page shows. */
const PAGE = 50;

/** The log's query: its filters, and the message its page starts after. */
function logQuery(status: string | undefined, deviceId: string | undefined, before: string | undefined): string {
  return new URLSearchParams({ ...(status ? { status } : {}), ...(deviceId ? { deviceId } : {}), ...(before ? { before } : {}) }).toString();
}

interface LogQuery {
  status?: string;
  deviceId?: string;
  before?: string;
}

/** The log as it was viewed (its filters and length): where a resend or a recovery from it goes back to. */
function logUrl(serviceId: string, query: LogQuery): string {
  const view = new URLSearchParams(Object.entries(query)).toString();
  return `/console/services/${encodeURIComponent(serviceId)}/messages${view ? `?${view}` : ''}`;
}

/** The headers of the message's last attempt (or of one now), signed with the secrets valid then. */
function signedHeaders(service: Service, entry: MessageWithAttempts, now: number): Record<string, string> {
  const at = entry.attempts.at(-1)?.startedAt ?? now;
  const secrets = service.webhookSecrets.filter((s) => s.createdAt <= at && (s.expiresAt === null || s.expiresAt > at)).map((s) => s.secret);
  const { message } = entry;
  const timestamp = Math.floor(at / 1000);
  // A rotation drops the secret before the previous one: a signature by a later secret would be one never sent.
  const signed = secrets.length
    ? signatureHeaders({ messageId: message.messageId, timestamp, body: message.body, secrets })
    : { 'webhook-id': message.messageId, 'webhook-timestamp': String(timestamp), 'webhook-signature': '— (signed with a secret rotated out since)' };
  return { ...signed, 'webhook-sequence': String(message.sequence) };
}

/** `view` is the log's query, which a resend goes back to. */
function messageItem(viewer: Viewer, service: Service, entry: MessageWithAttempts, now: number, view: string): Html {
  const { message, attempts } = entry;
  const headers = Object.entries(signedHeaders(service, entry, now)).map(([name, value]) => `${name}: ${value}`).join('\n');
  const attemptRows = attempts.map((a) => html`<tr><td>${a.attempt}</td><td>${when(a.startedAt)}</td>
<td>${a.responseStatus === null ? html`<span class="bad">—</span>` : html`<span class="${a.responseStatus >= 200 && a.responseStatus < 300 ? 'ok' : 'bad'}">${a.responseStatus}</span>`}</td>
<td>${Math.round(a.durationMs)} ms</td><td><code>${(a.error ?? a.responseBody ?? '').slice(0, EXCERPT)}</code></td></tr>`);
  return html`<details class="message" data-message-id="${message.messageId}">
<summary><span class="badge ${STATUS_CLASS[message.status]}">${message.status}</span> ${when(message.createdAt)} · <strong>${message.pushType}</strong>
· <code>${message.deviceId}</code> · seq ${message.sequence} · ${attempts.length} attempt${attempts.length === 1 ? '' : 's'}</summary>
<p><code>webhook-id ${message.messageId}</code> · next attempt ${message.status === 'pending' ? when(message.nextAttemptAt) : '—'} · delivered ${when(message.deliveredAt)}</p>
<h4>Body</h4><pre>${JSON.stringify(JSON.parse(message.body), null, 2)}</pre>
<h4>Headers <span class="muted">(of the last attempt, signed with the secrets valid then)</span></h4><pre>${headers}</pre>
<h4>Attempts</h4>
${attempts.length ? html`<div class="scroll"><table><thead><tr><th>#</th><th>time</th><th>code</th><th>latency</th><th>response excerpt</th></tr></thead><tbody>${attemptRows}</tbody></table></div>` : html`<p class="muted">None yet.</p>`}
<form method="post" action="/console/messages/${encodeURIComponent(message.messageId)}/resend?${view}">${csrf(viewer)}
<input type="hidden" name="serviceId" value="${service.serviceId}"><button type="submit">Resend</button></form>
</details>`;
}

async function logPage(deps: ConsoleDeps, viewer: Viewer, serviceId: string, query: LogQuery, outcome: Outcome | null): Promise<string> {
  const { accounts, clock } = deps.ctx;
  const service = await accounts.getService(serviceId);
  const status = STATUSES.find((s) => s === query.status);
  const deviceId = query.deviceId?.trim() || undefined;
  const before = query.before || undefined;
  const messages = await accounts.listMessages(service.serviceId, {
    ...(status ? { status } : {}),
    ...(deviceId ? { deviceId } : {}),
    ...(before ? { before } : {}),
    limit: PAGE,
  });
  const now = clock.now();
  const base = `/console/services/${encodeURIComponent(service.serviceId)}`;
  const hourAgo = new Date(now - 3_600_000).toISOString().slice(0, 16);
  const view = logQuery(status, deviceId, before);
  // A full page may have older messages after it: the next page starts after its last.
  const older = messages.length === PAGE ? messages.at(-1)?.message.messageId : undefined;
  const body = html`<p><a href="/console/services">Services</a> · <code>${service.serviceId}</code> · push <code>${service.callbackUrl ?? '—'}</code></p>
${outcomeBox(outcome)}
<div class="grid2">
<form method="get" action="${base}/messages" class="row">
<label for="f-status">status</label><select id="f-status" name="status"><option value="">any</option>${STATUSES.map((s) => html`<option${s === status ? html` selected` : ''}>${s}</option>`)}</select>
<label for="f-device">device</label><input id="f-device" name="deviceId" value="${deviceId ?? ''}" size="14">
<button class="secondary" type="submit">Filter</button></form>
<form method="post" action="${base}/recover?${view}" class="row">${csrf(viewer)}
<label for="since">recover failed since (UTC)</label><input id="since" name="since" type="datetime-local" value="${hourAgo}">
<button type="submit">Recover</button></form>
</div>
<p class="muted">${messages.length} message${messages.length === 1 ? '' : 's'}, newest first.</p>
${messages.map((m) => messageItem(viewer, service, m, now, view))}
${older ? html`<p><a class="button" href="${base}/messages?${logQuery(status, deviceId, older)}">Older →</a></p>` : ''}`;
  return consolePage(viewer, 'services', `Delivery log · ${service.name}`, body);
}

export function messageRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  const { accounts } = deps.ctx;

  app.get<{ Params: { serviceId: string }; Querystring: LogQuery }>('/services/:serviceId/messages', async (request, reply) => {
    reply.type('text/html; charset=utf-8');
    return logPage(deps, deps.viewer(request), request.params.serviceId, request.query, await deps.takeFlash(request));
  });

  // A resend or a recovery goes back to the log as it was filtered: the form's action carries its query.
  app.post<{ Params: { messageId: string }; Querystring: LogQuery }>('/messages/:messageId/resend', async (request, reply) => {
    const serviceId = field(request.body, 'serviceId') ?? '';
    const outcome = await outcomeOf(async () => {
      await accounts.resendMessage(request.params.messageId);
      return `Message ${request.params.messageId} is due again, with the same webhook-id.`;
    });
    return answerForm(deps, request, reply, outcome, logUrl(serviceId, request.query), () => logPage(deps, deps.viewer(request), serviceId, request.query, outcome));
  });

  app.post<{ Params: { serviceId: string }; Querystring: LogQuery }>('/services/:serviceId/recover', async (request, reply) => {
    const { serviceId } = request.params;
    const outcome = await outcomeOf(async () => {
      const resent = await accounts.recoverFailed(serviceId, parseSince(field(request.body, 'since') ?? ''));
      return `${resent} failed message${resent === 1 ? ' is' : 's are'} due again.`;
    });
    return answerForm(deps, request, reply, outcome, logUrl(serviceId, request.query), () => logPage(deps, deps.viewer(request), serviceId, request.query, outcome));
  });
}
