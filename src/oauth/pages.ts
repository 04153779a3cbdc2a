/**
 * The owner's pages (DESIGN G): sign-in, consent, the device-code pages and /account. Pure: each
 * takes what it shows and returns the whole document; the routes fetch and decide.
 */
import { SCOPE_DESCRIPTIONS, SCOPES, type Link } from '../core/owners.js';
import type { Device, Service } from '../core/model.js';
import { html, page, type Html } from '../web/html.js';

/** A form's action, CSRF field and any hidden fields, as the route built them. */
export interface FormTarget {
  action: string;
  hidden: Html;
}

function errorNote(error: string | undefined): Html {
  return error ? html`<p class="error" role="alert">${error}</p>` : html``;
}

function scopeList(scopes: readonly string[]): Html {
  const known = SCOPES.filter((scope) => scopes.includes(scope));
  return html`<ul>${known.map((scope) => html`<li><strong>${scope}</strong>: ${SCOPE_DESCRIPTIONS[scope]}</li>`)}</ul>`;
}

export function signInPage(form: FormTarget, options: { heading: string; note?: string; error?: string; email?: string }): string {
  return page({
    title: 'Sign in',
    body: html`<h1>${options.heading}</h1>
${options.note ? html`<p>${options.note}</p>` : html``}
${errorNote(options.error)}
<form method="post" action="${form.action}">
${form.hidden}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required autofocus value="${options.email ?? ''}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<p><button type="submit">Sign in</button></p>
</form>`,
  });
}

function deviceLabel(device: Device): string {
  return `${device.alias} (${device.deviceType.replace(/^DEVICE_/, '').replaceAll('_', ' ').toLowerCase()}, ${device.modelName})`;
}

export function consentPage(form: FormTarget, deny: FormTarget, view: { service: Service; scopes: string[]; devices: Device[]; error?: string }): string {
  const { service, scopes, devices } = view;
  const types = service.allowedDevices.map((type) => type.replace(/^DEVICE_/, '').replaceAll('_', ' ').toLowerCase());
  return page({
    title: 'Link your appliances',
    body: html`<h1>${service.name} asks to link your appliances</h1>
${errorNote(view.error)}
<p>If you agree, <strong>${service.name}</strong> may:</p>
${scopeList(scopes)}
<p class="muted">It may only see devices of these types: ${types.join(', ')}.</p>
<form method="post" action="${form.action}">
${form.hidden}
<fieldset>
<legend>Which devices do you share?</legend>
<p><input type="radio" id="share-all" name="share" value="all" checked>
<label for="share-all" style="display:inline">All of them, including devices I add later</label></p>
<p><input type="radio" id="share-chosen" name="share" value="chosen">
<label for="share-chosen" style="display:inline">Only the ones I choose:</label></p>
${devices.length === 0
  ? html`<p class="muted">You have no device of these types yet.</p>`
  : html`<ul style="list-style:none">${devices.map((device) => html`<li><input type="checkbox" id="device-${device.deviceId}" name="device" value="${device.deviceId}">
<label for="device-${device.deviceId}" style="display:inline">${deviceLabel(device)}</label></li>`)}</ul>`}
</fieldset>
<p><button type="submit">Allow</button></p>
</form>
<form method="post" action="${deny.action}">${deny.hidden}<button type="submit" class="secondary">Deny</button></form>`,
  });
}

export function deviceCodePage(form: FormTarget, error?: string): string {
  return page({
    title: 'Link a device',
    body: html`<h1>Link an app that showed you a code</h1>
${errorNote(error)}
<form method="post" action="${form.action}">
${form.hidden}
<label for="user_code">Code shown by the app</label>
<input id="user_code" name="user_code" type="text" autocomplete="off" autocapitalize="characters" required autofocus>
<p><button type="submit">Continue</button></p>
</form>`,
  });
}

export function deviceConfirmPage(form: FormTarget, view: { clientName: string; userCode: string }): string {
  return page({
    title: 'Confirm the code',
    body: html`<h1>Link ${view.clientName}?</h1>
<p>The app should be showing the code <code>${view.userCode}</code>. Continue only if it does.</p>
<form method="post" action="${form.action}">
${form.hidden}
<p><button type="submit" name="confirm" value="yes">Continue</button>
<button type="submit" name="abort" value="yes" class="secondary">Cancel</button></p>
</form>`,
  });
}

export function messagePage(title: string, message: string): string {
  return page({ title, body: html`<h1>${title}</h1><p>${message}</p>` });
}

export interface AccountView {
  devices: Device[];
  links: Link[];
  /** The forms' CSRF field. */
  csrf: Html;
  notice?: string;
}

function sharedDevices(link: Link, devices: Device[]): Html {
  const { deviceIds } = link;
  if (deviceIds === null) return html`all of the types it may see, including later ones`;
  const names = devices.filter((d) => deviceIds.includes(d.deviceId)).map((d) => d.alias);
  return html`${names.length ? names.join(', ') : 'none'}`;
}

/** The service's name; one the owner never consented to says who linked it, as the owner may not know it. */
function serviceName(link: Link): Html {
  if (link.linkedBy === 'consent') return html`${link.service.name}`;
  return html`${link.service.name}<br><span class="muted">linked by the operator, not by your consent</span>`;
}

export function accountPage(view: AccountView): string {
  const { devices, links, csrf } = view;
  return page({
    title: 'Your account',
    body: html`<h1>Your appliances</h1>
${view.notice ? html`<p role="status">${view.notice}</p>` : html``}
${devices.length === 0 ? html`<p class="muted">No device is registered to you.</p>` : html`<table>
<thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Rename</th></tr></thead>
<tbody>${devices.map((device) => html`<tr><td>${device.alias}</td><td>${device.deviceType}</td><td>
<form method="post" action="/account/devices/${device.deviceId}/rename">${csrf}
<label for="alias-${device.deviceId}" class="muted" style="display:inline;font-weight:400">New name for ${device.alias}</label>
<input id="alias-${device.deviceId}" name="alias" required maxlength="100" value="${device.alias}">
<button type="submit">Rename</button></form></td></tr>`)}</tbody></table>`}
<h2>Linked services</h2>
${links.length === 0 ? html`<p class="muted">No service is linked to your appliances.</p>` : html`<table>
<thead><tr><th scope="col">Service</th><th scope="col">May</th><th scope="col">Sees</th><th scope="col"></th></tr></thead>
<tbody>${links.map((link) => html`<tr><td>${serviceName(link)}</td><td>${link.scopes.join(', ')}</td><td>${sharedDevices(link, devices)}</td><td>
<form method="post" action="/account/services/${link.service.serviceId}/unlink">${csrf}
<button type="submit" aria-label="Unlink ${link.service.name}">Unlink</button></form></td></tr>`)}</tbody></table>`}
<form method="post" action="/account/sign-out">${csrf}<p><button type="submit" class="secondary">Sign out</button></p></form>`,
  });
}
