/**
 * Server-rendered pages (owner sign-in, consent, account, console): HTML built by a tagged template
 * that escapes every interpolated value unless it is already Html, and one page layout with its own
 * stylesheet, so no page loads anything from elsewhere (no CDN, works offline).
 */

/** Markup that is safe to insert as is: built by `html` or marked by `raw`. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => ESCAPES[char]!);
}

type Part = Html | string | number | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(String(part));
}

/** `html\`<p>${name}</p>\``: values are escaped, arrays joined, null/undefined/false left out. */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let text = strings[0]!;
  values.forEach((value, i) => {
    text += render(value) + strings[i + 1]!;
  });
  return new Html(text);
}

/** Marks trusted markup (never text from a request) as Html. */
export function raw(text: string): Html {
  return new Html(text);
}

/** Headers of every page: none may be shown in a frame of another site, where a click on Allow or Unlink could be stolen. */
export const NOT_FRAMED = { 'x-frame-options': 'DENY' } as const;

export interface PageOptions {
  title: string;
  body: Html;
  /** Extra markup for <head>, e.g. a page's own script served by the process. */
  head?: Html;
}

const STYLE = `
:root { color-scheme: light dark; --accent: #a50034; --on-accent: #fff; --muted: #6b7280; --line: #d1d5db; --error: #b91c1c; }
/* The brand's red is too dark to read on a dark page (2.4:1): a lighter one, with dark text on buttons. */
@media (prefers-color-scheme: dark) { :root { --accent: #ff7aa2; --on-accent: #1a0009; --muted: #9ca3af; --line: #4b5563; --error: #f87171; } }
* { box-sizing: border-box; }
body { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; }
header.site { display: flex; align-items: center; gap: .6rem; padding: .75rem 1rem; border-bottom: 1px solid var(--line); }
header.site strong { color: var(--accent); }
main { max-width: 60rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.4rem; }
label { display: block; margin: .75rem 0 .25rem; font-weight: 600; }
input, select, textarea, button { font: inherit; padding: .45rem .6rem; border: 1px solid var(--line); border-radius: .35rem; max-width: 100%; }
button, .button { background: var(--accent); color: var(--on-accent); border-color: var(--accent); cursor: pointer; text-decoration: none; display: inline-block; }
button.secondary { background: transparent; color: inherit; border-color: var(--line); }
:focus-visible { outline: 3px solid #2563eb; outline-offset: 2px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
.error { color: var(--error); font-weight: 600; }
.muted { color: var(--muted); }
pre, code { font-family: ui-monospace, monospace; font-size: .9em; overflow-x: auto; }
`;

/** The product's logo, which the docs serve as their icon: without a link a browser asks for /favicon.ico, a 404 on every page. */
export const ICON = '/docs/static/theme/logo.svg';

/** A whole document: the layout every page shares, readable on a phone. */
export function page({ title, body, head }: PageOptions): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · appliance-cloud</title>
<link rel="icon" type="image/svg+xml" href="${ICON}">
<style>${raw(STYLE)}</style>
${head}
</head>
<body>
<header class="site"><strong>appliance-cloud</strong><span class="muted">${title}</span></header>
<main>
${body}
</main>
</body>
</html>`.text;
}
