/**
 * A device's live page (DESIGN H): its status, pushed by server-sent events as it changes on any
 * node; a control form built from its profile; and, for a virtual appliance, the simulator's
 * actions and time scale. Control goes through Devices.control (the partner API's path), the
 * simulator through the same calls as /admin/devices/{id}/sim and /admin/sim/time-scale.
 */
import type { FastifyInstance } from 'fastify';
import { listProperties, listWritable, parsedProfile, valueAt } from '../catalog/index.js';
import { ERROR_KEY } from '../catalog/status.js';
import type { DeviceStatus, ParsedProfile } from '../catalog/types.js';
import { isObject } from '../catalog/values.js';
import { actionsFor } from '../sim/actions.js';
import { MAX_TIME_SCALE, MIN_TIME_SCALE } from '../sim/time-scale.js';
import type { Device } from '../core/model.js';
import { html, type Html } from '../web/html.js';
import { commandFromForm, propertyInput, writableAt } from './control.js';
import { answerForm, field, fields, outcomeOf, type ConsoleDeps, type Outcome } from './deps.js';
import { consolePage, csrf, outcomeBox, type Viewer } from './layout.js';
import type { LiveState } from './live.js';

/** How often an idle event stream says it is alive, so proxies keep it open. */
const HEARTBEAT_MS = 15_000;

function show(value: unknown): string {
  return value === undefined ? '—' : typeof value === 'string' ? value : JSON.stringify(value);
}

/** The error codes the status shows now (LG's `error`), each with its location for a device with locations. */
function errorsShown(status: DeviceStatus): string[] {
  return (Array.isArray(status) ? status : [status]).flatMap((entry) => {
    const code = entry[ERROR_KEY];
    if (typeof code !== 'string') return [];
    const location = isObject(entry.location) ? entry.location.locationName : undefined;
    return [typeof location === 'string' ? `${location}: ${code}` : code];
  });
}

/** The live part of the page: connection, version, the device's error and every readable value. */
export function statusPanel(profile: ParsedProfile, state: { version: number; online: boolean; status: DeviceStatus }): Html {
  const { status } = state;
  const rows = listProperties(profile).filter((p) => p.property.readable).map((item) => html`<tr>
<td><code>${item.path}</code></td><td data-path="${item.path}">${show(valueAt(status, item))}</td>
<td class="muted">${item.property.writable ? 'read/write' : 'read-only'}</td></tr>`);
  return html`<p>${state.online ? html`<span class="badge ok">online</span>` : html`<span class="badge bad">offline</span>`}
${errorsShown(status).map((error) => html`<span class="badge bad" data-error>error ${error}</span> `)}<span class="muted">status version</span> <strong id="version">${state.version}</strong></p>
<div class="scroll"><table><thead><tr><th>property</th><th>value</th><th>access</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

function controlSection(viewer: Viewer, device: Device, profile: ParsedProfile, status: DeviceStatus): Html {
  const writable = listWritable(profile);
  if (!writable.length) return html`<p class="muted">This model has no writable property: every command is refused (2207).</p>`;
  const action = `/console/devices/${encodeURIComponent(device.deviceId)}/control`;
  return html`${writable.map((item) => html`<form class="control" method="post" action="${action}" data-inline="outcome">
${csrf(viewer)}<input type="hidden" name="path" value="${item.path}">
${propertyInput(item, valueAt(status, item))}<button type="submit">Set</button></form>`)}`;
}

function simulatorSection(viewer: Viewer, deps: ConsoleDeps, device: Device, profile: ParsedProfile): Html {
  if (!device.virtual) return html``;
  const base = `/console/devices/${encodeURIComponent(device.deviceId)}`;
  const actions = Object.entries(actionsFor(deps.ctx.devices.modelOf(device)));
  const locations = profile.locations?.map((l) => l.name) ?? [];
  return html`<section><h2>Simulator</h2>
<form method="post" action="${base}/sim" data-inline="outcome">${csrf(viewer)}
${locations.length ? html`<label for="sim-location">location</label><select id="sim-location" name="location">${locations.map((l) => html`<option>${l}</option>`)}</select>` : ''}
<div class="actions">${actions.map(([name, summary]) => html`<button type="submit" name="action" value="${name}" title="${summary}">${name}</button>`)}</div>
</form>
<form class="row" method="post" action="${base}/time-scale" data-inline="outcome time-scale">${csrf(viewer)}
<label for="time-scale">time scale <span class="muted">(simulated minutes per minute, for every virtual appliance; 1 = real time)</span></label>
<input id="time-scale" name="scale" type="number" min="${MIN_TIME_SCALE}" max="${MAX_TIME_SCALE}" step="any" value="${deps.ctx.simulator.timeScale}" style="width:7rem">
<button type="submit">Set</button></form></section>`;
}

async function devicePage(deps: ConsoleDeps, viewer: Viewer, deviceId: string, outcome: Outcome | null): Promise<string> {
  const device = await deps.ctx.devices.get(deviceId);
  const state = await deps.ctx.devices.state(deviceId);
  const profile = parsedProfile(deps.ctx.devices.modelOf(device));
  const live = `/console/devices/${encodeURIComponent(device.deviceId)}/events`;
  const body = html`<p><code>${device.deviceId}</code> · ${device.deviceType} · ${device.modelName} · ${device.virtual ? 'virtual appliance' : 'real device'}
· users ${device.userNumbers.join(', ')}</p>
${outcomeBox(outcome)}
<div class="grid2">
<section><h2>Status <span class="muted">(live)</span></h2><div id="live" data-live="${live}">${statusPanel(profile, state)}</div></section>
<section><h2>Control</h2>${controlSection(viewer, device, profile, state.status)}</section>
</div>
${simulatorSection(viewer, deps, device, profile)}`;
  return consolePage(viewer, 'devices', device.alias, body);
}

/** A device's page, where its actions go back to. */
function pageOf(deviceId: string): string {
  return `/console/devices/${encodeURIComponent(deviceId)}`;
}

export function deviceRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  const { ctx } = deps;
  type Params = { Params: { deviceId: string } };

  app.get<Params>('/devices/:deviceId', async (request, reply) => {
    reply.type('text/html; charset=utf-8');
    return devicePage(deps, deps.viewer(request), request.params.deviceId, await deps.takeFlash(request));
  });

  app.post<Params>('/devices/:deviceId/control', async (request, reply) => {
    const device = await ctx.devices.get(request.params.deviceId);
    const outcome = await outcomeOf(async () => {
      const item = writableAt(parsedProfile(ctx.devices.modelOf(device)), field(request.body, 'path'));
      const state = await ctx.devices.control(device, commandFromForm(item, fields(request.body, 'value')), false);
      return `${item.path} set; status version ${state.version}.`;
    });
    return answerForm(deps, request, reply, outcome, pageOf(device.deviceId), () => devicePage(deps, deps.viewer(request), device.deviceId, outcome));
  });

  app.post<Params>('/devices/:deviceId/sim', async (request, reply) => {
    const { deviceId } = request.params;
    const action = field(request.body, 'action') ?? '';
    const location = field(request.body, 'location');
    const outcome = await outcomeOf(async () => {
      const state = await ctx.simulator.act(deviceId, action, location === undefined ? undefined : { location });
      return `${action} done; status version ${state.version}.`;
    });
    return answerForm(deps, request, reply, outcome, pageOf(deviceId), () => devicePage(deps, deps.viewer(request), deviceId, outcome));
  });

  app.post<Params>('/devices/:deviceId/time-scale', async (request, reply) => {
    const raw = field(request.body, 'scale') ?? '';
    const outcome = await outcomeOf(async () => {
      const scale = Number(raw);
      // Text that is no finite number is refused as typed, not as the NaN or Infinity it becomes.
      await ctx.simulator.setTimeScale(raw.trim() !== '' && Number.isFinite(scale) ? scale : raw);
      return `Time scale set to ${ctx.simulator.timeScale}.`;
    });
    return answerForm(deps, request, reply, outcome, pageOf(request.params.deviceId), () => devicePage(deps, deps.viewer(request), request.params.deviceId, outcome));
  });

  app.get<Params>('/devices/:deviceId/events', async (request, reply) => {
    const device = await ctx.devices.get(request.params.deviceId);
    const profile = parsedProfile(ctx.devices.modelOf(device));
    reply.hijack();
    const stream = reply.raw;
    stream.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    stream.write('retry: 2000\n\n');
    const send = (state: LiveState) => {
      const panel = statusPanel(profile, { version: state.version, online: state.online, status: JSON.parse(state.statusJson) as DeviceStatus });
      stream.write(`event: status\ndata: ${JSON.stringify({ version: state.version, online: state.online, html: panel.text })}\n\n`);
    };
    const unwatch = deps.watch.watch(device.deviceId, send);
    const heartbeat = setInterval(() => stream.write(': alive\n\n'), HEARTBEAT_MS);
    // The session was checked once, when the stream opened: it must not outlive it (the page then asks again, and is sent to sign in).
    const sessionEnd = setTimeout(() => end(), Math.max(0, deps.sessionEndsAt(request) - ctx.clock.now()));
    const streams = deps.streams;
    const end = () => {
      clearInterval(heartbeat);
      clearTimeout(sessionEnd);
      unwatch();
      streams.delete(end);
      if (!stream.writableEnded) stream.end();
    };
    streams.add(end);
    request.raw.on('close', end);
  });
}
