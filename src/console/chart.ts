/**
 * The overview's chart as inline SVG (no script, no library): one bar per minute of the last hour,
 * attempts that succeeded over those that failed, and a line of the mean attempt latency.
 */
import type { AttemptMinute } from '../store/areas/overview.js';
import { html, type Html } from '../web/html.js';

const MINUTE = 60_000;
const WIDTH = 600;
const HEIGHT = 170;
const PLOT = { left: 34, right: 40, top: 12, bottom: 24 };

/** `minutes` as the store gives them; `now` ends the hour. */
export function attemptsChart(minutes: readonly AttemptMinute[], now: number): Html {
  const firstMinute = Math.floor(now / MINUTE) * MINUTE - 59 * MINUTE;
  const slots = Array.from({ length: 60 }, (_, i) => minutes.find((m) => m.minute === firstMinute + i * MINUTE));
  const shown = slots.filter((m) => m !== undefined);
  const maxAttempts = Math.max(1, ...shown.map((m) => m.attempts));
  const maxLatency = Math.max(1, ...shown.map((m) => m.meanMs));
  const plotWidth = WIDTH - PLOT.left - PLOT.right;
  const plotHeight = HEIGHT - PLOT.top - PLOT.bottom;
  const slot = plotWidth / 60;
  const x = (i: number) => PLOT.left + i * slot;
  const y = (value: number, max: number) => PLOT.top + plotHeight - (value / max) * plotHeight;
  const total = shown.reduce((sum, m) => sum + m.attempts, 0);
  const failed = shown.reduce((sum, m) => sum + m.attempts - m.succeeded, 0);

  const bars = slots.map((m, i) => {
    if (!m) return '';
    const okTop = y(m.succeeded, maxAttempts);
    const allTop = y(m.attempts, maxAttempts);
    const base = y(0, maxAttempts);
    return html`<g><title>${new Date(m.minute).toISOString().slice(11, 16)} UTC: ${m.attempts} attempts, ${m.attempts - m.succeeded} failed, mean ${Math.round(m.meanMs)} ms</title>
<rect x="${x(i) + 1}" y="${okTop}" width="${slot - 2}" height="${base - okTop}" fill="#15803d"/>
<rect x="${x(i) + 1}" y="${allTop}" width="${slot - 2}" height="${okTop - allTop}" fill="#dc2626"/></g>`;
  });
  const points = slots.flatMap((m, i) => (m ? [`${x(i) + slot / 2},${y(m.meanMs, maxLatency)}`] : []));
  const line = points.length > 1 ? html`<polyline points="${points.join(' ')}" fill="none" stroke="#2563eb" stroke-width="2"/>` : '';
  const dots = points.length === 1 ? html`<circle cx="${points[0]!.split(',')[0]}" cy="${points[0]!.split(',')[1]}" r="3" fill="#2563eb"/>` : '';
  const bottom = HEIGHT - PLOT.bottom;

  return html`<figure>
<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="chart-title">
<title id="chart-title">Delivery attempts per minute over the last hour: ${total} attempts, ${failed} failed</title>
<line x1="${PLOT.left}" y1="${bottom}" x2="${WIDTH - PLOT.right}" y2="${bottom}" stroke="currentColor" stroke-opacity=".4"/>
<text x="${PLOT.left - 4}" y="${PLOT.top + 8}" text-anchor="end">${maxAttempts}</text>
<text x="${PLOT.left - 4}" y="${bottom}" text-anchor="end">0</text>
${total ? html`<text x="${WIDTH - PLOT.right + 4}" y="${PLOT.top + 8}" fill="#2563eb">${Math.round(maxLatency)} ms</text>` : html`<text x="${WIDTH / 2}" y="${HEIGHT / 2}" text-anchor="middle" class="muted">No delivery attempts in the last hour</text>`}
<text x="${PLOT.left}" y="${HEIGHT - 6}">−60 min</text>
<text x="${WIDTH - PLOT.right}" y="${HEIGHT - 6}" text-anchor="end">now</text>
${bars}${line}${dots}
</svg>
<figcaption class="muted"><span class="ok">■</span> delivered <span class="bad">■</span> failed attempts per minute · <span style="color:#2563eb">—</span> mean attempt latency</figcaption>
</figure>`;
}
