import { describe, expect, it } from 'vitest';
import { mayPublish, maySubscribe, parseTopic, RESULT_FILTER, DEVICE_FILTERS, topicOf, TOPIC_KINDS } from '../../src/device-protocol/topics.js';

describe('device protocol topics (DESIGN B)', () => {
  it('builds and parses every kind of the contract', () => {
    for (const kind of TOPIC_KINDS) {
      expect(topicOf('dev-1', kind)).toBe(`appliance/dev-1/${kind}`);
      expect(parseTopic(topicOf('dev-1', kind))).toEqual({ deviceId: 'dev-1', kind });
    }
  });

  it.each([
    'appliance/dev-1',
    'appliance/dev-1/',
    'appliance/dev-1/status',
    'appliance/dev-1/command/other',
    'appliance//state',
    'appliance/dev.1/state',
    'appliance/+/state',
    'other/dev-1/state',
    `appliance/${'a'.repeat(129)}/state`,
  ])('refuses %s as a device topic', (topic) => {
    expect(parseTopic(topic)).toBeNull();
  });

  it('lets a device publish state, push, connection and command results under its own prefix only', () => {
    for (const kind of ['state', 'push', 'connection', 'command/result'] as const) {
      expect(mayPublish('dev-1', topicOf('dev-1', kind))).toBe(true);
      expect(mayPublish('dev-1', topicOf('dev-2', kind))).toBe(false);
    }
    expect(mayPublish('dev-1', topicOf('dev-1', 'command'))).toBe(false);
    expect(mayPublish('dev-1', 'appliance/dev-1/other')).toBe(false);
    expect(mayPublish('dev-1', '$SYS/broker')).toBe(false);
  });

  it('lets a device subscribe under its own prefix and nowhere else', () => {
    for (const filter of ['appliance/dev-1/command', 'appliance/dev-1/#', 'appliance/dev-1/+', 'appliance/dev-1/command/#']) {
      expect(maySubscribe('dev-1', filter)).toBe(true);
    }
    for (const filter of ['appliance/dev-2/command', 'appliance/+/command', 'appliance/#', 'appliance/dev-1', 'appliance/dev-1/', 'appliance/dev-10/command', '#', '+/dev-1/command', '$share/g/appliance/dev-1/command']) {
      expect(maySubscribe('dev-1', filter)).toBe(false);
    }
  });

  it('consumes what devices send as one stream, and command results apart', () => {
    expect(DEVICE_FILTERS).toEqual(['appliance/+/state', 'appliance/+/push', 'appliance/+/connection']);
    expect(RESULT_FILTER).toBe('appliance/+/command/result');
  });
});
