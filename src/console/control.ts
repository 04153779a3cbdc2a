/**
 * The control form of a device, built from its profile (DESIGN H): one small form per writable
 * property — enums and booleans as selects, ranges as sliders with their steps, numbers and strings
 * as inputs — and the command a submitted form stands for. Pure.
 */
import { commandFor, listWritable } from '../catalog/index.js';
import type { ListedProperty } from '../catalog/index.js';
import type { JsonObject, ParsedProfile } from '../catalog/types.js';
import { fail } from '../errors.js';
import { html, type Html } from '../web/html.js';

/** The input of one writable property, showing `current`. */
export function propertyInput(item: ListedProperty, current: unknown): Html {
  const { property } = item;
  const id = `v-${item.path.replace(/[^A-Za-z0-9]/g, '-')}`;
  const label = html`<label for="${id}">${item.path}${'unit' in property && property.unit ? html` <span class="muted">(${property.unit})</span>` : ''}</label>`;
  switch (property.type) {
    case 'enum':
    case 'boolean': {
      const values = property.type === 'enum' ? property.write : ['true', 'false'];
      const options = values.map((v) => html`<option${String(current) === v ? html` selected` : ''}>${v}</option>`);
      return html`${label}<select id="${id}" name="value">${options}</select><span></span>`;
    }
    case 'range': {
      const range = property.write!;
      const value = typeof current === 'number' ? current : range.min;
      return html`${label}<input id="${id}" type="range" name="value" min="${range.min}" max="${range.max}" step="${range.step}" value="${value}"><output for="${id}">${value}</output>`;
    }
    case 'list':
      return html`${label}<select id="${id}" name="value" multiple>${property.write.map((v) => html`<option${Array.isArray(current) && current.includes(v) ? html` selected` : ''}>${v}</option>`)}</select><span></span>`;
    case 'number':
      return html`${label}<input id="${id}" type="number" step="any" name="value" value="${typeof current === 'number' ? current : ''}"><span></span>`;
    default:
      return html`${label}<input id="${id}" type="text" name="value" value="${typeof current === 'string' ? current : ''}"><span></span>`;
  }
}

/** The writable property a form names by its path; 2207 when the profile has none such. */
export function writableAt(profile: ParsedProfile, path: string | undefined): ListedProperty {
  const item = listWritable(profile).find((p) => p.path === path);
  if (!item) throw fail('2207', `The profile has no writable property ${JSON.stringify(path)}.`);
  return item;
}

/**
 * The command a form stands for: its text values read as the property's type. What is not a value
 * of that type is passed on as text, so the profile's validation refuses it with its own message.
 */
export function commandFromForm(item: ListedProperty, values: string[]): JsonObject {
  const text = values[0] ?? '';
  switch (item.property.type) {
    case 'range':
    case 'number':
      return commandFor(item, text.trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : text);
    case 'boolean':
      return commandFor(item, text === 'true' ? true : text === 'false' ? false : text);
    case 'list':
      return commandFor(item, values);
    default:
      return commandFor(item, text);
  }
}
