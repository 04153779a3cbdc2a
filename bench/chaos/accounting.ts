/**
 * The chaos run's ledger, pure: the reports the cloud accepted (a PUBACK or a 200 arrived) against
 * the DEVICE_STATUS messages the receiver verified. Every report of the load sets a counter of its own
 * source under a resource no profile declares (`{"chaos": {"mqtt": 17}}`, kept as DESIGN J allows),
 * so the message a change produced names the report it came from.
 */

export const SOURCES = ['mqtt', 'admin', 'control'] as const;
/** How a report reached the cloud: MQTT QoS 1, `POST /admin/devices/{id}/report`, or a partner control answered by the device. */
export type Source = (typeof SOURCES)[number];

export interface Change {
  source: Source;
  n: number;
}

/** A report the cloud acknowledged. */
export interface Accepted extends Change {
  deviceId: string;
  /** When it was sent and when its acknowledgement arrived, ms since the run started. */
  sentAt: number;
  at: number;
}

/** One verified request the receiver answered 2xx. */
export interface Arrival {
  webhookId: string;
  sequence: number;
  deviceId: string;
  pushType: string;
  /** The counters its `report` carries. */
  changes: Change[];
  /** The exact body, to tell a message sent again from another one under the same webhook-id. */
  body: string;
}

export interface Accounting {
  accepted: number;
  /** DEVICE_STATUS messages received, each webhook-id counted once. */
  delivered: number;
  /** Accepted reports that no delivered message carries. */
  lost: Accepted[];
  /** Arrivals of a webhook-id already received, with the same body: allowed after a crash mid-attempt. */
  duplicatesSameId: number;
  /** Extra webhook-ids carrying a change already delivered under another: never allowed. */
  duplicatesNewId: number;
  /** Arrivals of a webhook-id already received with another body. */
  sameIdOtherBody: number;
  /** Per device, messages received after one of a higher webhook-sequence (DESIGN C: delivery order). */
  orderViolations: number;
  /**
   * Per device, reports applied out of the order their source sent them: a report delivered under a
   * lower webhook-sequence than the same source's earlier report, so the stored status went back.
   */
  reportOrderViolations: number;
  /** The accepted reports behind those violations: each applied after a later report of its source. */
  lateReports: Accepted[];
  /** The first few of either, described. */
  orderExamples: string[];
  /** Delivered changes of requests whose answer never came (the node died first): allowed. */
  unanswered: number;
  /** DEVICE_STATUS messages without a counter: changes the load did not make. */
  foreign: number;
}

/** The counters in a DEVICE_STATUS `report`, whatever else it holds. */
export function changesOf(report: unknown): Change[] {
  const chaos = isObject(report) ? report.chaos : undefined;
  if (!isObject(chaos)) return [];
  return SOURCES.flatMap((source) => (typeof chaos[source] === 'number' ? [{ source, n: chaos[source] }] : []));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const ORDER_EXAMPLES = 10;

const keyOf = (deviceId: string, { source, n }: Change) => `${deviceId} ${source} ${n}`;

/** Every accepted report against every arrival, in the order they arrived. */
export function account(accepted: readonly Accepted[], arrivals: readonly Arrival[]): Accounting {
  const bodies = new Map<string, string>();
  /** Per change, the webhook-ids that carried it. */
  const carriers = new Map<string, Set<string>>();
  const messages: Arrival[] = [];
  let duplicatesSameId = 0;
  let sameIdOtherBody = 0;
  for (const arrival of arrivals) {
    if (arrival.pushType !== 'DEVICE_STATUS') continue;
    const body = bodies.get(arrival.webhookId);
    if (body !== undefined) {
      if (body === arrival.body) duplicatesSameId++;
      else sameIdOtherBody++;
      continue;
    }
    bodies.set(arrival.webhookId, arrival.body);
    messages.push(arrival);
    for (const change of arrival.changes) {
      const key = keyOf(arrival.deviceId, change);
      carriers.set(key, (carriers.get(key) ?? new Set()).add(arrival.webhookId));
    }
  }
  const acceptedByKey = new Map(accepted.map((a) => [keyOf(a.deviceId, a), a]));
  const delivery = arrivalOrderViolations(messages);
  const reports = sourceOrderViolations(messages);
  return {
    accepted: accepted.length,
    delivered: messages.length,
    lost: accepted.filter((a) => !carriers.has(keyOf(a.deviceId, a))),
    duplicatesSameId,
    duplicatesNewId: [...carriers.values()].reduce((sum, ids) => sum + ids.size - 1, 0),
    sameIdOtherBody,
    orderViolations: delivery.length,
    reportOrderViolations: reports.length,
    lateReports: reports.flatMap(({ key }) => acceptedByKey.get(key) ?? []),
    orderExamples: [...delivery, ...reports.map(({ text }) => text)].slice(0, ORDER_EXAMPLES),
    unanswered: [...carriers.keys()].filter((key) => !acceptedByKey.has(key)).length,
    foreign: messages.filter((m) => m.changes.length === 0).length,
  };
}

/** First arrivals whose sequence is not above every sequence of the device received before them. */
function arrivalOrderViolations(messages: readonly Arrival[]): string[] {
  const highest = new Map<string, number>();
  const violations: string[] = [];
  for (const { deviceId, sequence } of messages) {
    const before = highest.get(deviceId) ?? -Infinity;
    if (sequence <= before) violations.push(`${deviceId}: sequence ${sequence} arrived after sequence ${before}`);
    highest.set(deviceId, Math.max(before, sequence));
  }
  return violations;
}

/** Each source sends a device's reports one after another, so by sequence its counters must rise. */
function sourceOrderViolations(messages: readonly Arrival[]): { key: string; text: string }[] {
  const last = new Map<string, { n: number; sequence: number }>();
  const violations: { key: string; text: string }[] = [];
  for (const { deviceId, sequence, changes } of [...messages].sort((a, b) => a.sequence - b.sequence)) {
    for (const { source, n } of changes) {
      const key = `${deviceId} ${source}`;
      const before = last.get(key);
      if (before && n < before.n) {
        violations.push({ key: keyOf(deviceId, { source, n }), text: `${deviceId}: ${source} #${n} has sequence ${sequence}, after #${before.n} at sequence ${before.sequence}` });
      }
      last.set(key, { n, sequence });
    }
  }
  return violations;
}
