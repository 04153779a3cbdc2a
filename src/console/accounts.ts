/** Users and devices, a page at a time (DESIGN H), read as GET /admin/users and GET /admin/devices read them. */
import type { FastifyInstance } from 'fastify';
import { page } from '../admin/overview.js';
import { html, type Html } from '../web/html.js';
import type { ConsoleDeps } from './deps.js';
import { consolePage, when } from './layout.js';

const PAGE = '100';

function nextLink(path: string, ids: string[]): Html {
  const last = ids.at(-1);
  return ids.length === Number(PAGE) && last !== undefined ? html`<p><a href="${path}?after=${encodeURIComponent(last)}">Next page →</a></p>` : html``;
}

export function accountRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  const { store, accounts, devices: deviceService } = deps.ctx;
  type Query = { Querystring: { after?: string } };

  app.get<Query>('/users', async (request, reply) => {
    const users = await accounts.listUsers(page({ ...request.query, limit: PAGE }));
    const rows = await Promise.all(users.map(async (user) => {
      const devices = await store.listUserDevices(user.userNumber);
      return html`<tr><td><code>${user.userNumber}</code></td><td>${user.countryCode}</td><td>${when(user.createdAt)}</td>
<td>${devices.map((d) => html`<a href="/console/devices/${encodeURIComponent(d.deviceId)}">${d.alias}</a> `)}</td></tr>`;
    }));
    const body = html`<div class="scroll"><table><thead><tr><th>userNumber</th><th>country</th><th>created</th><th>devices</th></tr></thead><tbody>${rows}</tbody></table></div>
${nextLink('/console/users', users.map((u) => u.userNumber))}`;
    reply.type('text/html; charset=utf-8');
    return consolePage(deps.viewer(request), 'users', 'Users', body);
  });

  app.get<Query>('/devices', async (request, reply) => {
    const devices = await deviceService.list(page({ ...request.query, limit: PAGE }));
    const rows = devices.map((d) => html`<tr><td><a href="/console/devices/${encodeURIComponent(d.deviceId)}">${d.alias}</a><br><code class="muted">${d.deviceId}</code></td>
<td>${d.deviceType}<br><span class="muted">${d.modelName}</span></td><td>${d.virtual ? 'virtual' : 'real'}</td>
<td>${d.online ? html`<span class="badge ok">online</span>` : html`<span class="badge bad">offline</span>`}</td><td>${d.userNumbers.map((u) => html`<code>${u}</code> `)}</td></tr>`);
    const body = html`<div class="scroll"><table><thead><tr><th>device</th><th>type</th><th>kind</th><th>connection</th><th>users</th></tr></thead><tbody>${rows}</tbody></table></div>
${nextLink('/console/devices', devices.map((d) => d.deviceId))}`;
    reply.type('text/html; charset=utf-8');
    return consolePage(deps.viewer(request), 'devices', 'Devices', body);
  });
}
