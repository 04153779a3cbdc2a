/** The console's page: the shared layout (src/web/html.ts) with the console's navigation, stylesheet and script. */
import { csrfField } from '../web/csrf.js';
import type { Outcome } from './deps.js';
import { html, page, type Html } from '../web/html.js';

export type Section = 'overview' | 'services' | 'users' | 'devices';

const SECTIONS: { section: Section; label: string; href: string }[] = [
  { section: 'overview', label: 'Overview', href: '/console' },
  { section: 'services', label: 'Services', href: '/console/services' },
  { section: 'users', label: 'Users', href: '/console/users' },
  { section: 'devices', label: 'Devices', href: '/console/devices' },
];

const HEAD = html`<link rel="stylesheet" href="/console/assets/console.css"><script src="/console/assets/console.js" defer></script>`;

/** What a signed-in page needs to draw its forms. */
export interface Viewer {
  csrfKey: string;
  sessionId: string;
}

/** The hidden CSRF field of the viewer's session, for every form. */
export function csrf(viewer: Viewer): Html {
  return csrfField(viewer.csrfKey, viewer.sessionId);
}

/** A signed-in page: navigation, sign-out, and the body. */
export function consolePage(viewer: Viewer, section: Section | null, title: string, body: Html): string {
  const nav = html`<nav class="console" aria-label="Console">
${SECTIONS.map((s) => html`<a href="${s.href}"${s.section === section ? html` aria-current="page"` : ''}>${s.label}</a>`)}
<form method="post" action="/console/sign-out">${csrf(viewer)}<button class="secondary" type="submit">Sign out</button></form>
</nav>`;
  return page({ title, head: HEAD, body: html`${nav}<h1>${title}</h1>${body}` });
}

/** A page outside the signed-in area (sign-in, errors). */
export function plainPage(title: string, body: Html): string {
  return page({ title, head: HEAD, body: html`<h1>${title}</h1>${body}` });
}

/** Epoch ms as a short UTC time, e.g. `2026-01-01 12:00:05`. */
export function when(epochMs: number | null): string {
  return epochMs === null ? '—' : new Date(epochMs).toISOString().replace('T', ' ').slice(0, 19);
}

/** A duration for people: `45 s`, `12 min`, `3.5 h`. */
export function age(ms: number | null): string {
  if (ms === null) return '—';
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

/** What the last action came to, where every page shows it. */
export function outcomeBox(outcome: Outcome | null): Html {
  if (!outcome) return html`<div id="outcome" aria-live="polite"></div>`;
  if (outcome.ok) return html`<div id="outcome" aria-live="polite" class="outcome ok">${outcome.message}</div>`;
  return html`<div id="outcome" aria-live="polite" class="outcome refused"><span class="error">Refused ${outcome.code}</span>: ${outcome.message}</div>`;
}
