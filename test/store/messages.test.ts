import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatTimestamp } from '../../src/ids.js';
import {
  isEmptyReport,
  lifecycleMessages,
  messageBody,
  messageKind,
  pushMessages,
  statusMessages,
  type DeviceFacts,
  type LifecycleListener,
  type MessageSpec,
} from '../../src/store/messages.js';

type Example = { messageId: string; timestamp: string; push?: Record<string, unknown>; event?: Record<string, unknown> };
const readExamples = (file: string) =>
  JSON.parse(readFileSync(new URL(`../../reference/thinq/_api/${file}`, import.meta.url), 'utf8')) as Record<string, Example>;
const business = readExamples('business_callback_examples.json');
const thinqConnect = readExamples('thinqconnect_push_event_examples.json');

/** The epoch time, with microseconds, an example's timestamp stands for. */
function atOf(timestamp: string): number {
  return Date.parse(`${timestamp.slice(0, 23)}Z`) + Number(timestamp.slice(23)) / 1000;
}

/** The spec an example's payload describes, the service id defaulting for the business examples, which omit it. */
function specOf(payload: Record<string, unknown>): MessageSpec {
  return { serviceId: 'SERVICE-1', ...payload } as unknown as MessageSpec;
}

const ORDER: Record<string, string[]> = {
  DEVICE_REGISTERED: ['pushType', 'serviceId', 'deviceId', 'userNumber', 'modelName', 'deviceType', 'alias'],
  DEVICE_UNREGISTERED: ['pushType', 'serviceId', 'deviceId', 'userNumber', 'deviceType', 'alias'],
  DEVICE_ALIAS_CHANGED: ['pushType', 'serviceId', 'deviceId', 'userNumber', 'alias'],
  DEVICE_PUSH: ['pushType', 'serviceId', 'deviceId', 'pushCode', 'deviceType', 'userList'],
  DEVICE_STATUS: ['pushType', 'serviceId', 'deviceId', 'deviceType', 'report', 'userList'],
};

describe('messageBody', () => {
  describe.each(Object.entries(thinqConnect))('the ThinQ Connect example %s', (_, example) => {
    it('is rebuilt exactly, fields in DESIGN order', () => {
      const payload = example.push ?? example.event ?? {};
      const body = messageBody(specOf(payload), example.messageId, atOf(example.timestamp));
      expect(JSON.parse(body)).toEqual(example);
      const parsed = JSON.parse(body) as Example;
      expect(Object.keys(parsed)).toEqual(['messageId', 'timestamp', example.push ? 'push' : 'event']);
      expect(Object.keys(parsed.push ?? parsed.event ?? {})).toEqual(ORDER[String(payload.pushType)]);
    });
  });

  describe.each(Object.entries(business))('the business example %s', (_, example) => {
    it('is rebuilt with the serviceId DESIGN adds and without extra fields', () => {
      const payload = example.push ?? example.event ?? {};
      const parsed = JSON.parse(messageBody(specOf(payload), example.messageId, atOf(example.timestamp))) as Example;
      const built = parsed.push ?? parsed.event ?? {};
      expect(parsed.messageId).toBe(example.messageId);
      expect(parsed.timestamp).toBe(example.timestamp);
      expect(Object.keys(built)).toEqual(ORDER[String(payload.pushType)]);
      // LG's registered example also shows `reportable`, which DESIGN A.8 leaves out of the message.
      const { reportable: _reportable, ...documented } = payload;
      expect(built).toEqual({ ...documented, serviceId: 'SERVICE-1' });
    });
  });

  it('puts only DEVICE_STATUS under "event"', () => {
    expect(messageKind('DEVICE_STATUS')).toBe('event');
    for (const pushType of ['DEVICE_REGISTERED', 'DEVICE_UNREGISTERED', 'DEVICE_ALIAS_CHANGED', 'DEVICE_PUSH'] as const) {
      expect(messageKind(pushType)).toBe('push');
    }
  });

  it('writes the field order whatever order the spec has', () => {
    const spec: MessageSpec = { userList: ['U'], report: [{ a: 1 }], deviceType: 'T', deviceId: 'D', serviceId: 'S', pushType: 'DEVICE_STATUS' };
    expect(messageBody(spec, 'm', 0)).toBe(
      '{"messageId":"m","timestamp":"1970-01-01T00:00:00.000000","event":{"pushType":"DEVICE_STATUS","serviceId":"S","deviceId":"D","deviceType":"T","report":[{"a":1}],"userList":["U"]}}',
    );
  });
});

describe('lifecycleMessages', () => {
  const device: DeviceFacts = { deviceId: 'D1', deviceType: 'DEVICE_WASHER', modelName: 'M1', alias: 'Washer' };
  const listeners: LifecycleListener[] = [
    { serviceId: 'loaded', allowedDevices: ['DEVICE_WASHER'], deviceListLoadedAt: 1 },
    { serviceId: 'not-loaded', allowedDevices: ['DEVICE_WASHER'], deviceListLoadedAt: null },
    { serviceId: 'other-types', allowedDevices: ['DEVICE_DRYER'], deviceListLoadedAt: 1 },
    { serviceId: 'also-loaded', allowedDevices: ['DEVICE_DRYER', 'DEVICE_WASHER'], deviceListLoadedAt: 0 },
  ];

  it('tells the services that loaded the list and allow the type, with the fields of each push type', () => {
    expect(lifecycleMessages('DEVICE_REGISTERED', device, 'U1', listeners)).toEqual(
      ['loaded', 'also-loaded'].map((serviceId) => ({
        pushType: 'DEVICE_REGISTERED', serviceId, deviceId: 'D1', userNumber: 'U1', modelName: 'M1', deviceType: 'DEVICE_WASHER', alias: 'Washer',
      })),
    );
    expect(lifecycleMessages('DEVICE_UNREGISTERED', device, 'U1', listeners.slice(0, 1))).toEqual([
      { pushType: 'DEVICE_UNREGISTERED', serviceId: 'loaded', deviceId: 'D1', userNumber: 'U1', deviceType: 'DEVICE_WASHER', alias: 'Washer' },
    ]);
    expect(lifecycleMessages('DEVICE_ALIAS_CHANGED', device, 'U1', listeners.slice(0, 1))).toEqual([
      { pushType: 'DEVICE_ALIAS_CHANGED', serviceId: 'loaded', deviceId: 'D1', userNumber: 'U1', alias: 'Washer' },
    ]);
    expect(lifecycleMessages('DEVICE_REGISTERED', device, 'U1', [])).toEqual([]);
  });
});

describe('pushMessages and statusMessages', () => {
  const device = { deviceId: 'D1', deviceType: 'DEVICE_DRYER' };
  const subscribers = [
    { serviceId: 'S2', userNumber: 'U3', subscribedAt: 30, expiresAt: 1000 },
    { serviceId: 'S1', userNumber: 'U2', subscribedAt: 20, expiresAt: 100 },
    { serviceId: 'S1', userNumber: 'U1', subscribedAt: 10, expiresAt: 1000 },
  ];

  it('sends one DEVICE_PUSH per service, users in subscription order', () => {
    expect(pushMessages(device, 'DRYING_IS_COMPLETE', subscribers)).toEqual([
      { pushType: 'DEVICE_PUSH', serviceId: 'S1', deviceId: 'D1', pushCode: 'DRYING_IS_COMPLETE', deviceType: 'DEVICE_DRYER', userList: ['U1', 'U2'] },
      { pushType: 'DEVICE_PUSH', serviceId: 'S2', deviceId: 'D1', pushCode: 'DRYING_IS_COMPLETE', deviceType: 'DEVICE_DRYER', userList: ['U3'] },
    ]);
    expect(pushMessages(device, 'X', [])).toEqual([]);
  });

  it('sends one DEVICE_STATUS per service, leaving out subscriptions expired at the time of the change', () => {
    const report = { runState: { currentState: 'RUNNING' } };
    expect(statusMessages(device, report, subscribers, 50)).toEqual([
      { pushType: 'DEVICE_STATUS', serviceId: 'S1', deviceId: 'D1', deviceType: 'DEVICE_DRYER', report, userList: ['U1', 'U2'] },
      { pushType: 'DEVICE_STATUS', serviceId: 'S2', deviceId: 'D1', deviceType: 'DEVICE_DRYER', report, userList: ['U3'] },
    ]);
    expect(statusMessages(device, report, subscribers, 100).map((m) => [m.serviceId, m.userList])).toEqual([
      ['S1', ['U1']],
      ['S2', ['U3']],
    ]);
    expect(statusMessages(device, report, subscribers, 1000)).toEqual([]);
  });

  it('sends nothing for an empty report', () => {
    expect(statusMessages(device, {}, subscribers, 0)).toEqual([]);
    expect(statusMessages(device, [], subscribers, 0)).toEqual([]);
    expect(isEmptyReport(null)).toBe(true);
    expect(isEmptyReport([{}])).toBe(false);
    expect(isEmptyReport({ a: null })).toBe(false);
  });
});

it('formats the timestamp as A.3 says', () => {
  const at = atOf('2025-01-09T04:24:35.540658');
  expect(formatTimestamp(at)).toBe('2025-01-09T04:24:35.540658');
  expect(JSON.parse(messageBody({ pushType: 'DEVICE_ALIAS_CHANGED', serviceId: 'S', deviceId: 'D', userNumber: 'U', alias: 'A' }, 'm', at)).timestamp).toBe(
    '2025-01-09T04:24:35.540658',
  );
});
