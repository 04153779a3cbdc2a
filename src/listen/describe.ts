/** One delivery as `listen` prints it: a line a developer reads at a glance. Pure. */
import { parseJsonText } from '../json.js';

/** What a delivery was, for the line: the message's fields, and how it went. */
export interface DeliverySummary {
  /** The raw body as POSTed. */
  body: string;
  verified: boolean;
  /** Why the signature did not verify, when it did not. */
  reason?: string;
  /** The status the forward target answered, its error, or undefined when there is none. */
  forwarded?: number | string;
}

const MAX_VALUE = 60;

/** A property's value as short text: never String(), which throws on `{"toString": 0}`. */
function compact(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
}

/** A field of the message (an id, a code, an alias): a string whole, anything else as short JSON. */
function field(value: unknown): string {
  return typeof value === 'string' ? value : compact(value);
}

/**
 * A report's properties as `name=value`; a report of locations (a washer, an oven) as
 * `MAIN:name=value`, each entry under its location's name rather than its index.
 */
function changes(report: unknown): string {
  const properties = (body: Record<string, unknown>, where = '') => Object.entries(body).map(([name, value]) => `${where}${name}=${compact(value)}`);
  if (!Array.isArray(report)) return properties((report ?? {}) as Record<string, unknown>).join(' ');
  return report
    .flatMap((entry: unknown) => {
      if (entry === null || typeof entry !== 'object') return [compact(entry)];
      const { location, ...rest } = entry as Record<string, unknown>;
      const name = (location as { locationName?: unknown } | undefined)?.locationName;
      return properties(rest, name === undefined ? '' : `${field(name)}:`);
    })
    .join(' ');
}

/** The part of a message that says what happened: the push code, the changed properties, the alias. */
function detail(payload: Record<string, unknown>): string {
  switch (payload.pushType) {
    case 'DEVICE_PUSH':
      return field(payload.pushCode);
    case 'DEVICE_STATUS':
      return changes(payload.report);
    case 'DEVICE_REGISTERED':
      return `${field(payload.deviceType)} "${field(payload.alias)}" for user ${field(payload.userNumber)}`;
    case 'DEVICE_UNREGISTERED':
      return `"${field(payload.alias)}" from user ${field(payload.userNumber)}`;
    case 'DEVICE_ALIAS_CHANGED':
      return `now "${field(payload.alias)}"`;
    default:
      return '';
  }
}

/** `DEVICE_PUSH  <deviceId>  WASHING_IS_COMPLETE  signature ✓  → forwarded 200`. */
export function describeDelivery({ body, verified, reason, forwarded }: DeliverySummary): string {
  let payload: Record<string, unknown> = {};
  try {
    const message = parseJsonText(body) as { push?: Record<string, unknown>; event?: Record<string, unknown> };
    payload = message.push ?? message.event ?? {};
  } catch {
    // Not JSON, or nested past the limit: still shown, as what it is.
  }
  const parts = [
    field(payload.pushType ?? 'not a message'),
    field(payload.deviceId ?? '-'),
    detail(payload),
    verified ? 'signature ✓' : `signature ✗ (${reason ?? 'no match'})`,
    ...(forwarded === undefined ? [] : [`→ ${typeof forwarded === 'number' ? `forwarded, ${forwarded}` : `not forwarded: ${forwarded}`}`]),
  ];
  return parts.filter((part) => part !== '').join('  ');
}
