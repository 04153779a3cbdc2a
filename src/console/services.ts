/**
 * Calling services (DESIGN H): allowed types, callback URLs (set here too), endpoint health, enable or disable,
 * rotate the webhook secret (retiring the previous one at once, if asked) — through Accounts, as PATCH /admin/services/{id} and
 * POST /admin/services/{id}/rotate-secret do.
 */
import type { FastifyInstance } from 'fastify';
import { servicesWithHealth, type ServiceHealth } from '../core/overview.js';
import { html, type Html } from '../web/html.js';
import { answerForm, field, outcomeOf, type ConsoleDeps, type Outcome } from './deps.js';
import { consolePage, csrf, outcomeBox, when, type Viewer } from './layout.js';
import { healthBadge } from './overview.js';

/** A service's callback URLs, as stored or as typed. */
interface CallbackUrls {
  callbackUrl: string | null;
  eventCallbackUrl: string | null;
}

/** Where the service's messages go (DESIGN C): shown, and set from a form; an empty field clears it. */
function callbackForm(viewer: Viewer, base: string, urls: CallbackUrls): Html {
  return html`<form class="urls" method="post" action="${base}/callback-urls">${csrf(viewer)}
<label for="${base}-callback">push</label><input id="${base}-callback" name="callbackUrl" type="url" value="${urls.callbackUrl ?? ''}" placeholder="none: messages are held" size="28">
<label for="${base}-event-callback">events</label><input id="${base}-event-callback" name="eventCallbackUrl" type="url" value="${urls.eventCallbackUrl ?? ''}" placeholder="the push URL" size="28">
<button class="secondary" type="submit">Save callback URLs</button></form>`;
}

/** Redirect URIs of the service as an OAuth client (DESIGN G): shown, and replaced from a form (one per line). */
function redirectUrisForm(viewer: Viewer, base: string, text: string): Html {
  return html`<form method="post" action="${base}/redirect-uris">${csrf(viewer)}
<label for="${base}-redirect-uris">redirect URIs</label>
<textarea id="${base}-redirect-uris" name="redirectUris" rows="${Math.max(2, text.split('\n').length + 1)}" cols="40">${text}</textarea>
<button class="secondary" type="submit">Save redirect URIs</button></form>`;
}

function serviceRow(viewer: Viewer, entry: ServiceHealth, uris: string, urls: CallbackUrls): Html {
  const { service } = entry;
  const base = `/console/services/${encodeURIComponent(service.serviceId)}`;
  const toggle = service.enabled && entry.health.disabledAt === null
    ? html`<form method="post" action="${base}/enabled">${csrf(viewer)}<input type="hidden" name="enabled" value="false"><button class="secondary" type="submit">Disable</button></form>`
    : html`<form method="post" action="${base}/enabled">${csrf(viewer)}<input type="hidden" name="enabled" value="true"><button type="submit">Enable</button></form>`;
  return html`<tr>
<td><strong>${service.name}</strong><br><code class="muted">${service.serviceId}</code><br><span class="muted">since ${when(service.createdAt)}</span></td>
<td><details><summary>${service.allowedDevices.length} types</summary>${service.allowedDevices.map((t) => html`<div><code>${t}</code></div>`)}</details></td>
<td>${callbackForm(viewer, base, urls)}
${redirectUrisForm(viewer, base, uris)}</td>
<td>${healthBadge(entry)}</td>
<td><div class="actions">${toggle}
<form method="post" action="${base}/rotate-secret">${csrf(viewer)}<button class="secondary" type="submit">Rotate secret</button>
<label class="check"><input type="checkbox" name="expirePreviousNow" value="true"> retire the previous one now</label></form>
<a class="button" href="${base}/messages">Delivery log</a></div></td>
</tr>`;
}

/** What was typed in a service's form that was refused: shown again, to be corrected. */
interface Typed {
  serviceId: string;
  redirectUris?: string;
  urls?: CallbackUrls;
}

async function servicesPage(deps: ConsoleDeps, viewer: Viewer, outcome: Outcome | null, typed?: Typed): Promise<string> {
  const services = await servicesWithHealth(deps.ctx);
  const typedFor = (serviceId: string) => (typed?.serviceId === serviceId ? typed : undefined);
  const uris = await Promise.all(
    services.map(async ({ service }) => typedFor(service.serviceId)?.redirectUris ?? (await deps.ctx.accounts.redirectUris(service.serviceId)).join('\n')),
  );
  const body = html`${outcomeBox(outcome)}
<div class="scroll"><table><thead><tr><th>service</th><th>allowed types</th><th>callback URLs</th><th>endpoint</th><th></th></tr></thead>
<tbody>${services.map((s, i) => serviceRow(viewer, s, uris[i]!, typedFor(s.service.serviceId)?.urls ?? s.service))}</tbody></table></div>
${services.length ? '' : html`<p class="muted">No service yet: create one with POST /admin/services or <code>appliance-cloud admin services create</code>.</p>`}`;
  return consolePage(viewer, 'services', 'Services', body);
}

/** Where every action of this page goes back to. */
const SERVICES = '/console/services';

export function serviceRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  const { accounts } = deps.ctx;
  type Params = { Params: { serviceId: string } };

  app.get('/services', async (request, reply) => {
    reply.type('text/html; charset=utf-8');
    return servicesPage(deps, deps.viewer(request), await deps.takeFlash(request));
  });

  app.post<Params>('/services/:serviceId/enabled', async (request, reply) => {
    const enabled = field(request.body, 'enabled') === 'true';
    const outcome = await outcomeOf(async () => {
      const service = await accounts.updateService(request.params.serviceId, { enabled });
      return `${service.name} is ${enabled ? 'enabled: held messages go out' : 'disabled: its messages are held'}.`;
    });
    return answerForm(deps, request, reply, outcome, SERVICES, () => servicesPage(deps, deps.viewer(request), outcome));
  });

  app.post<Params>('/services/:serviceId/rotate-secret', async (request, reply) => {
    // DESIGN J: a leaked secret is retired at once, as with the admin API's expirePreviousNow.
    const expirePreviousNow = field(request.body, 'expirePreviousNow') === 'true';
    const outcome = await outcomeOf(async () => {
      const secret = await accounts.rotateSecret(request.params.serviceId, { expirePreviousNow });
      return `New webhook secret of ${request.params.serviceId}, shown this once: ${secret} — ${expirePreviousNow ? 'the previous one no longer signs.' : 'the previous one signs for 24 h more.'}`;
    });
    return answerForm(deps, request, reply, outcome, SERVICES, () => servicesPage(deps, deps.viewer(request), outcome));
  });

  app.post<Params>('/services/:serviceId/callback-urls', async (request, reply) => {
    const url = (name: string) => field(request.body, name)?.trim() || null;
    const urls = { callbackUrl: url('callbackUrl'), eventCallbackUrl: url('eventCallbackUrl') };
    const outcome = await outcomeOf(async () => {
      const service = await accounts.updateService(request.params.serviceId, urls);
      return `${service.name}'s push messages go to ${service.callbackUrl ?? 'no URL (they are held)'}, its events to ${service.eventCallbackUrl ?? 'the push URL'}.`;
    });
    return answerForm(deps, request, reply, outcome, SERVICES, () => servicesPage(deps, deps.viewer(request), outcome, { serviceId: request.params.serviceId, urls }));
  });

  app.post<Params>('/services/:serviceId/redirect-uris', async (request, reply) => {
    // One per line, as the form shows them: a line that is not a URL is refused whole, by its text.
    const text = field(request.body, 'redirectUris') ?? '';
    const redirectUris = text.split(/\r?\n/).map((line) => line.trim()).filter(Boolean);
    const outcome = await outcomeOf(async () => {
      const service = await accounts.updateService(request.params.serviceId, { redirectUris });
      return `${service.name} now has ${redirectUris.length} redirect URI${redirectUris.length === 1 ? '' : 's'}.`;
    });
    return answerForm(deps, request, reply, outcome, SERVICES, () => servicesPage(deps, deps.viewer(request), outcome, { serviceId: request.params.serviceId, redirectUris: text }));
  });
}
