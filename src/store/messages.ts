/**
 * The messages of DESIGN A.8 as pure functions shared by every store: who is told what about a
 * change (fan-out), and the exact JSON body each message carries.
 */
import type { DeviceStatus } from '../catalog/types.js';
import { formatTimestamp } from '../ids.js';
import type { DeviceType, MessageKind, PushType } from '../core/model.js';

interface Addressed {
  serviceId: string;
  deviceId: string;
}

export interface DeviceRegistered extends Addressed {
  pushType: 'DEVICE_REGISTERED';
  userNumber: string;
  modelName: string;
  deviceType: DeviceType;
  alias: string;
}

export interface DeviceUnregistered extends Addressed {
  pushType: 'DEVICE_UNREGISTERED';
  userNumber: string;
  deviceType: DeviceType;
  alias: string;
}

export interface DeviceAliasChanged extends Addressed {
  pushType: 'DEVICE_ALIAS_CHANGED';
  userNumber: string;
  alias: string;
}

export interface DevicePush extends Addressed {
  pushType: 'DEVICE_PUSH';
  pushCode: string;
  deviceType: DeviceType;
  userList: string[];
}

export interface DeviceStatusEvent extends Addressed {
  pushType: 'DEVICE_STATUS';
  deviceType: DeviceType;
  report: DeviceStatus;
  userList: string[];
}

/** What one message tells one service, before it has an id and a time. */
export type MessageSpec = DeviceRegistered | DeviceUnregistered | DeviceAliasChanged | DevicePush | DeviceStatusEvent;

export type LifecyclePushType = 'DEVICE_REGISTERED' | 'DEVICE_UNREGISTERED' | 'DEVICE_ALIAS_CHANGED';

/** A device as lifecycle messages describe it (the alias is the one to announce). */
export interface DeviceFacts {
  deviceId: string;
  deviceType: DeviceType;
  modelName: string;
  alias: string;
}

/** A service connected to the user the change concerns. */
export interface LifecycleListener {
  serviceId: string;
  allowedDevices: DeviceType[];
  /** Set once the service loaded the user's device list, which is also its lifecycle subscription. */
  deviceListLoadedAt: number | null;
}

/** One user's push or event subscription to a device, as the fan-out needs it. */
export interface Subscriber {
  serviceId: string;
  userNumber: string;
  subscribedAt: number;
}

/** An event subscriber also has an expiry. */
export interface EventSubscriber extends Subscriber {
  expiresAt: number;
}

/** `push` messages go to the callback URL, `event` ones to the event callback URL. */
export function messageKind(pushType: PushType): MessageKind {
  return pushType === 'DEVICE_STATUS' ? 'event' : 'push';
}

/** The exact JSON text of a message (DESIGN A.8), fields in the documented order. */
export function messageBody(spec: MessageSpec, messageId: string, at: number): string {
  return JSON.stringify({ messageId, timestamp: formatTimestamp(at), [messageKind(spec.pushType)]: payload(spec) });
}

function payload(spec: MessageSpec): Record<string, unknown> {
  const { pushType, serviceId, deviceId } = spec;
  switch (spec.pushType) {
    case 'DEVICE_REGISTERED':
      return { pushType, serviceId, deviceId, userNumber: spec.userNumber, modelName: spec.modelName, deviceType: spec.deviceType, alias: spec.alias };
    case 'DEVICE_UNREGISTERED':
      return { pushType, serviceId, deviceId, userNumber: spec.userNumber, deviceType: spec.deviceType, alias: spec.alias };
    case 'DEVICE_ALIAS_CHANGED':
      return { pushType, serviceId, deviceId, userNumber: spec.userNumber, alias: spec.alias };
    case 'DEVICE_PUSH':
      return { pushType, serviceId, deviceId, pushCode: spec.pushCode, deviceType: spec.deviceType, userList: spec.userList };
    case 'DEVICE_STATUS':
      return { pushType, serviceId, deviceId, deviceType: spec.deviceType, report: spec.report, userList: spec.userList };
  }
}

/**
 * A lifecycle change of `device` for `userNumber`: one message to each connected service that
 * loaded the user's device list and may see the device's type.
 */
export function lifecycleMessages(
  pushType: LifecyclePushType,
  device: DeviceFacts,
  userNumber: string,
  listeners: LifecycleListener[],
): MessageSpec[] {
  const told = listeners.filter((l) => l.deviceListLoadedAt !== null && l.allowedDevices.includes(device.deviceType));
  return told.map(({ serviceId }): MessageSpec => {
    const { deviceId, deviceType, modelName, alias } = device;
    switch (pushType) {
      case 'DEVICE_REGISTERED':
        return { pushType, serviceId, deviceId, userNumber, modelName, deviceType, alias };
      case 'DEVICE_UNREGISTERED':
        return { pushType, serviceId, deviceId, userNumber, deviceType, alias };
      case 'DEVICE_ALIAS_CHANGED':
        return { pushType, serviceId, deviceId, userNumber, alias };
    }
  });
}

/** A notification of the device: one DEVICE_PUSH per service with at least one subscribed user. */
export function pushMessages(device: Pick<DeviceFacts, 'deviceId' | 'deviceType'>, pushCode: string, subscribers: Subscriber[]): DevicePush[] {
  return [...usersByService(subscribers)].map(([serviceId, userList]) => ({
    pushType: 'DEVICE_PUSH',
    serviceId,
    deviceId: device.deviceId,
    pushCode,
    deviceType: device.deviceType,
    userList,
  }));
}

/**
 * A status change of the device: one DEVICE_STATUS per service with at least one subscription
 * still unexpired at `at`. An empty report tells nobody anything.
 */
export function statusMessages(
  device: Pick<DeviceFacts, 'deviceId' | 'deviceType'>,
  report: DeviceStatus,
  subscribers: EventSubscriber[],
  at: number,
): DeviceStatusEvent[] {
  if (isEmptyReport(report)) return [];
  const live = subscribers.filter((s) => s.expiresAt > at);
  return [...usersByService(live)].map(([serviceId, userList]) => ({
    pushType: 'DEVICE_STATUS',
    serviceId,
    deviceId: device.deviceId,
    deviceType: device.deviceType,
    report,
    userList,
  }));
}

/** `{}`, `[]` and null report no change. */
export function isEmptyReport(report: DeviceStatus | null): boolean {
  if (report === null) return true;
  return Array.isArray(report) ? report.length === 0 : Object.keys(report).length === 0;
}

/** Services in order of their first subscriber; each one's users in order of subscription. */
function usersByService(subscribers: Subscriber[]): Map<string, string[]> {
  const byService = new Map<string, string[]>();
  const ordered = [...subscribers].sort((a, b) => a.subscribedAt - b.subscribedAt);
  for (const { serviceId, userNumber } of ordered) {
    const users = byService.get(serviceId) ?? [];
    if (!users.includes(userNumber)) users.push(userNumber);
    byService.set(serviceId, users);
  }
  return byService;
}
