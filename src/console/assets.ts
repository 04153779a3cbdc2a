/**
 * The console's own stylesheet and script, served by the process (no CDN, works offline). The script
 * only enhances: every form works without it; with it, forms marked `data-inline` are sent in the
 * background and the parts of the page they name are swapped from the answer, and a `data-live`
 * element follows the server-sent events of its URL (and the control inputs its values).
 */

export const CONSOLE_CSS = `
main { max-width: 72rem; }
code { overflow-wrap: anywhere; }
a.button { padding: .45rem .6rem; border-radius: .35rem; border: 1px solid var(--accent); }
nav.console { display: flex; flex-wrap: wrap; gap: .25rem 1rem; align-items: center; padding: .5rem 1rem; border-bottom: 1px solid var(--line); }
nav.console a { color: inherit; text-decoration: none; padding: .2rem 0; }
nav.console a[aria-current] { color: var(--accent); font-weight: 600; border-bottom: 2px solid var(--accent); }
nav.console form { margin-left: auto; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(9rem, 1fr)); gap: .75rem; margin: 1rem 0; }
.card { border: 1px solid var(--line); border-radius: .5rem; padding: .6rem .8rem; }
.card .n { font-size: 1.6rem; font-weight: 700; display: block; }
.card .label { color: var(--muted); font-size: .85rem; }
.badge { display: inline-block; padding: 0 .45rem; border-radius: 1rem; font-size: .8rem; font-weight: 600; border: 1px solid currentColor; white-space: nowrap; }
.ok { color: #15803d; } .bad { color: #b91c1c; } .warn { color: #b45309; }
/* A table wider than the screen shows a shadow at the side it scrolls to (the covers scroll with it, the shadows stay). */
.scroll { overflow-x: auto; background:
  linear-gradient(to right, Canvas 30%, transparent) left / 2rem 100% no-repeat local,
  linear-gradient(to left, Canvas 30%, transparent) right / 2rem 100% no-repeat local,
  radial-gradient(farthest-side at 0 50%, rgba(127,127,127,.45), transparent) left / .8rem 100% no-repeat scroll,
  radial-gradient(farthest-side at 100% 50%, rgba(127,127,127,.45), transparent) right / .8rem 100% no-repeat scroll; }
td form, .row { display: inline-flex; gap: .4rem; align-items: center; flex-wrap: wrap; margin: 0; }
form.control { display: grid; grid-template-columns: minmax(10rem, 1fr) minmax(8rem, 14rem) 4rem auto; gap: .5rem; align-items: center; padding: .35rem 0; border-bottom: 1px solid var(--line); }
form.control label { margin: 0; font-weight: 500; overflow-wrap: anywhere; }
td form.urls { display: grid; grid-template-columns: auto minmax(10rem, 1fr); gap: .35rem .5rem; align-items: center; }
form.urls label { margin: 0; }
label.check { display: inline-flex; gap: .3rem; align-items: center; margin: 0; font-weight: normal; }
form.urls button { grid-column: 1 / -1; justify-self: start; }
form.control output { font-variant-numeric: tabular-nums; }
@media (max-width: 40rem) { form.control { grid-template-columns: 1fr auto; } form.control label { grid-column: 1 / -1; } }
/* In view wherever the page is scrolled: the button that caused it may be a screen below it. */
.outcome { padding: .5rem .75rem; border-radius: .35rem; border: 1px solid var(--line); margin: .5rem 0; position: sticky; top: .25rem; z-index: 1; background: Canvas; }
.outcome.refused { border-color: #b91c1c; }
[data-live].stale > * { opacity: .5; }
[data-live].stale::before { content: 'Not live: reconnecting to the console. The values below may be out of date.'; display: block; font-weight: 600; color: #b45309; }
@media (prefers-color-scheme: dark) {
  .ok { color: #4ade80; } .bad { color: #f87171; } .warn, [data-live].stale::before { color: #fbbf24; }
  .outcome.refused { border-color: #f87171; }
}
.actions { display: flex; flex-wrap: wrap; gap: .4rem; }
details > summary { cursor: pointer; }
pre { background: rgba(127,127,127,.1); padding: .5rem; border-radius: .35rem; white-space: pre-wrap; overflow-wrap: anywhere; }
svg.chart { width: 100%; height: auto; max-height: 14rem; }
svg.chart text { font: 11px system-ui, sans-serif; fill: currentColor; }
.grid2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(20rem, 1fr)); gap: 1.5rem; }
`;

export const CONSOLE_JS = `'use strict';
document.addEventListener('submit', async (event) => {
  const form = event.target.closest('form[data-inline]');
  if (!form) return;
  event.preventDefault();
  const body = new URLSearchParams(new FormData(form, event.submitter));
  const busy = form.querySelectorAll('button');
  busy.forEach((b) => (b.disabled = true));
  try {
    // getAttribute: a control named "action" (the simulator's buttons) shadows form.action.
    const answer = await fetch(form.getAttribute('action'), { method: 'POST', body, credentials: 'same-origin' });
    const next = new DOMParser().parseFromString(await answer.text(), 'text/html');
    let swapped = 0;
    for (const id of form.dataset.inline.split(' ')) {
      const fresh = next.getElementById(id);
      const old = document.getElementById(id);
      if (fresh && old) {
        old.replaceWith(fresh);
        swapped += 1;
      }
    }
    // Not the page the form answers with (a session that ended, a refused CSRF token, a fault): say so.
    if (swapped === 0) {
      const said = next.querySelector('.error, [role=alert], main p');
      // A done action is redirected to its page: only one that ends on the sign-in page found no session.
      refuse(answer.status === 401 || new URL(answer.url).pathname === '/console/sign-in'
        ? 'Your console session has ended: reload the page to sign in again. Nothing was done.'
        : 'The console answered ' + answer.status + (said ? ': ' + said.textContent.trim() : '.'));
    }
  } catch (error) {
    refuse('The console did not answer: ' + error.message);
  } finally {
    busy.forEach((b) => (b.disabled = false));
    // A disabled button loses the focus: give it back, so that the keyboard stays where it was.
    if (event.submitter && event.submitter.isConnected && document.activeElement === document.body) event.submitter.focus();
  }
});
function refuse(text) {
  const outcome = document.getElementById('outcome');
  if (!outcome) return;
  outcome.className = 'outcome refused';
  outcome.textContent = text;
}
document.addEventListener('input', (event) => {
  const input = event.target;
  if (input.type !== 'range') return;
  const output = input.form && input.form.querySelector('output');
  if (output) output.value = input.value;
});
// The control inputs follow the live values, except the one being edited and a value the input cannot
// hold: an absent one (—), or a read-only state of a select (a timer reads SET, is only set to UNSET),
// which would leave a slider at its middle or a select blank, sending nothing.
function followStatus(live) {
  for (const form of document.querySelectorAll('form.control')) {
    const path = form.querySelector('input[name=path]').value;
    const cell = [...live.querySelectorAll('td[data-path]')].find((td) => td.dataset.path === path);
    const input = form.querySelector('[name=value]');
    if (!cell || !input || input.multiple || input === document.activeElement) continue;
    const value = cell.textContent;
    if (value === '—' || (input.options && ![...input.options].some((option) => option.value === value))) continue;
    input.value = value;
    const output = form.querySelector('output');
    if (output) output.value = input.value;
  }
}
for (const live of document.querySelectorAll('[data-live]')) {
  let source = null;
  let retryMs = 5000;
  const connect = () => {
    const current = new EventSource(live.dataset.live);
    source = current;
    current.addEventListener('status', (event) => {
      live.innerHTML = JSON.parse(event.data).html;
      live.classList.remove('stale');
      followStatus(live);
    });
    // The stream broke (the server went away, the session ended): the values shown may be old.
    current.addEventListener('error', () => {
      live.classList.add('stale');
      // EventSource gives up for good on an answer that is no stream (a proxy's 502 while the console restarts): open it
      // again, less often while it stays so (a device since deleted, a session that ended).
      if (current.readyState === EventSource.CLOSED) {
        setTimeout(() => { if (source === current && !document.hidden) connect(); }, retryMs);
        retryMs = Math.min(retryMs * 2, 60000);
      }
    });
    current.addEventListener('open', () => {
      live.classList.remove('stale');
      retryMs = 5000;
    });
  };
  // A browser opens six HTTP/1.1 connections to a server and each stream holds one: six device tabs would
  // leave none for another page. A tab in the background lets its stream go and takes it up when shown.
  document.addEventListener('visibilitychange', () => {
    if (document.hidden && source) {
      source.close();
      source = null;
      live.classList.add('stale');
    } else if (!document.hidden && !source) connect();
  });
  if (!document.hidden) connect();
}
`;
