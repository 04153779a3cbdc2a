/** The console's first page (DESIGN H): the numbers of GET /admin/overview, endpoints in trouble, and the last hour's chart. */
import type { FastifyInstance } from 'fastify';
import { overview, type ServiceHealth } from '../core/overview.js';
import { html, type Html } from '../web/html.js';
import { attemptsChart } from './chart.js';
import type { ConsoleDeps } from './deps.js';
import { age, consolePage, when } from './layout.js';

function card(label: string, value: string | number, id: string): Html {
  return html`<div class="card"><span class="n" id="${id}">${value}</span><span class="label">${label}</span></div>`;
}

/** How a service's delivery stands, as a badge. */
export function healthBadge({ service, health }: ServiceHealth): Html {
  if (health.disabledAt !== null) return html`<span class="badge bad" title="since ${when(health.disabledAt)}">endpoint disabled (${health.disabledReason})</span>`;
  if (!service.enabled) return html`<span class="badge warn">service disabled</span>`;
  if (health.failingSince !== null) return html`<span class="badge warn" title="since ${when(health.failingSince)}">failing since ${when(health.failingSince)}</span>`;
  return html`<span class="badge ok">healthy</span>`;
}

export function overviewRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  app.get('/', async (request, reply) => {
    const now = deps.ctx.clock.now();
    const o = await overview(deps.ctx);
    const troubled = o.troubled.length
      ? html`<div class="scroll"><table><thead><tr><th>service</th><th>endpoint</th><th></th></tr></thead><tbody>
${o.troubled.map((t) => html`<tr><td>${t.service.name}<br><code class="muted">${t.service.serviceId}</code></td><td>${healthBadge(t)}</td>
<td><a href="/console/services/${encodeURIComponent(t.service.serviceId)}/messages">delivery log</a></td></tr>`)}</tbody></table></div>`
      : html`<p class="ok">Every endpoint is healthy.</p>`;
    const body = html`<div class="cards">
${card('services', o.services, 'n-services')}${card('users', o.users, 'n-users')}
${card('devices online / total', `${o.devicesOnline} / ${o.devices}`, 'n-devices')}
${card('deliveries pending', o.pending + o.delivering, 'n-pending')}${card('held: no callback URL, or disabled', o.held, 'n-held')}
${card('oldest pending', age(o.oldestPendingAgeMs), 'n-oldest')}
</div>
<h2>Delivery attempts, last hour</h2>
${attemptsChart(o.lastHour, now)}
<h2>Endpoints failing or disabled</h2>
${troubled}`;
    reply.type('text/html; charset=utf-8');
    return consolePage(deps.viewer(request), 'overview', 'Overview', body);
  });
}
