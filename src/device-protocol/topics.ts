/**
 * The MQTT topic contract of DESIGN B, pure: every device lives under `appliance/{deviceId}/`, and
 * the embedded broker lets a device publish and subscribe only there.
 */
import { isDeviceId } from '../ids.js';

const TOPIC_ROOT = 'appliance';

/** What the device sends (state, push, connection, command/result) and what it receives (command). */
export type TopicKind = 'state' | 'push' | 'connection' | 'command' | 'command/result';

export const TOPIC_KINDS: readonly TopicKind[] = ['state', 'push', 'connection', 'command', 'command/result'];

/** The kinds a device publishes; `command` is the cloud's. */
const DEVICE_PUBLISHES: ReadonlySet<TopicKind> = new Set(['state', 'push', 'connection', 'command/result']);

export interface DeviceTopic {
  deviceId: string;
  kind: TopicKind;
}

export function topicOf(deviceId: string, kind: TopicKind): string {
  return `${TOPIC_ROOT}/${deviceId}/${kind}`;
}

/** A concrete topic (no wildcards) as device id and kind, or null when it is not one of the contract's. */
export function parseTopic(topic: string): DeviceTopic | null {
  const prefix = `${TOPIC_ROOT}/`;
  if (!topic.startsWith(prefix)) return null;
  const rest = topic.slice(prefix.length);
  const slash = rest.indexOf('/');
  if (slash < 0) return null;
  const deviceId = rest.slice(0, slash);
  const kind = TOPIC_KINDS.find((k) => k === rest.slice(slash + 1));
  if (!kind || !isDeviceId(deviceId)) return null;
  return { deviceId, kind };
}

/** A device may publish state, push, connection and command results, all under its own prefix. */
export function mayPublish(deviceId: string, topic: string): boolean {
  const parsed = parseTopic(topic);
  return parsed !== null && parsed.deviceId === deviceId && DEVICE_PUBLISHES.has(parsed.kind);
}

/**
 * A device may subscribe under its own prefix and nowhere else (DESIGN B): its command topic, or a
 * filter such as `appliance/{deviceId}/#` that firmware uses, whose wildcards cannot reach past the
 * prefix. `$share/…` and every other root start elsewhere.
 */
export function maySubscribe(deviceId: string, topicFilter: string): boolean {
  const prefix = `${TOPIC_ROOT}/${deviceId}/`;
  return topicFilter.length > prefix.length && topicFilter.startsWith(prefix);
}

const everyDevice = (kind: TopicKind) => `${TOPIC_ROOT}/+/${kind}`;

/**
 * The filters of what the cloud stores: on an external broker, the deployment's one stream of what
 * devices send, whose order is each device's (see gateway/device-stream.ts).
 */
export const DEVICE_FILTERS: readonly string[] = (['state', 'push', 'connection'] as const).map(everyDevice);

/** The filter of command results, which every node consumes itself (see gateway/bridge.ts for why). */
export const RESULT_FILTER = everyDevice('command/result');
