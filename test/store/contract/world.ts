/** Builders of a small world for the store contract: services, users, connections, devices, and the outbox read back. */
import { afterEach, beforeEach } from 'vitest';
import type { DeviceStatus } from '../../../src/catalog/types.js';
import type { Device, NewDevice, OutboxMessage, Service } from '../../../src/core/model.js';
import type { Store } from '../../../src/store/store.js';

/** 2025-01-09T04:24:35.540658: a time with microseconds, as the clock gives. */
export const T0 = Date.UTC(2025, 0, 9, 4, 24, 35, 540) + 0.658;
export const HOUR = 3_600_000;
export const WASHER = 'DEVICE_WASHER';
export const DRYER = 'DEVICE_DRYER';

/** Opens a fresh store before each test and closes it after; read it through the getter. */
export function freshStore(open: () => Promise<Store>): () => Store {
  let store: Store | undefined;
  beforeEach(async () => {
    store = await open();
  });
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });
  return () => {
    if (!store) throw new Error('The store is opened in beforeEach');
    return store;
  };
}

export async function addService(store: Store, serviceId: string, allowedDevices: string[] = [WASHER, DRYER], at = T0): Promise<Service> {
  return store.createService(
    {
      serviceId,
      name: `Service ${serviceId}`,
      keyHash: `hash-of-${serviceId}`,
      allowedDevices,
      callbackUrl: `https://${serviceId}.example/push`,
      eventCallbackUrl: null,
      webhookSecret: `whsec_${serviceId}`,
    },
    at,
  );
}

export async function addUser(store: Store, userNumber: string): Promise<void> {
  await store.createUser({ userNumber, countryCode: 'KR', createdAt: T0 });
}

/** Connects the user to the service with a token `tok-S-U`; `loaded` also marks the device list loaded. */
export async function connect(store: Store, serviceId: string, userNumber: string, loaded = true, at = T0): Promise<string> {
  const tokenHash = `tok-${serviceId}-${userNumber}`;
  await store.createToken({ tokenHash, serviceId, userNumber, expiresAt: at + HOUR }, at);
  if (loaded) await store.markDeviceListLoaded(serviceId, userNumber, at);
  return tokenHash;
}

export function newDevice(deviceId: string, deviceType = WASHER, alias = `My ${deviceId}`, status: DeviceStatus = { runState: { currentState: 'POWER_OFF' } }): NewDevice {
  return {
    deviceId,
    deviceType,
    modelName: `MODEL-${deviceType}`,
    alias,
    groupId: null,
    secretHash: `secret-of-${deviceId}`,
    virtual: true,
    online: true,
    status,
  };
}

export async function addDevice(store: Store, deviceId: string, owner: string, deviceType = WASHER, at = T0): Promise<Device> {
  return store.registerDevice(newDevice(deviceId, deviceType), owner, at);
}

/** A recorded message with its body parsed. */
export interface Recorded {
  message: OutboxMessage;
  body: { messageId: string; timestamp: string; push?: Record<string, unknown>; event?: Record<string, unknown> };
  /** The `push` or `event` object. */
  payload: Record<string, unknown>;
}

/** The service's messages, oldest first (the store lists newest first). */
export async function recorded(store: Store, serviceId: string, deviceId?: string): Promise<Recorded[]> {
  const messages = await store.listMessages(serviceId, deviceId === undefined ? { limit: 1000 } : { deviceId, limit: 1000 });
  return messages.reverse().map((message) => {
    const body = JSON.parse(message.body) as Recorded['body'];
    const payload = body.push ?? body.event;
    if (!payload) throw new Error(`Message ${message.messageId} has neither push nor event`);
    return { message, body, payload };
  });
}

/** The pushType of each of the service's messages, oldest first. */
export async function pushTypes(store: Store, serviceId: string): Promise<string[]> {
  return (await recorded(store, serviceId)).map((r) => String(r.payload.pushType));
}
