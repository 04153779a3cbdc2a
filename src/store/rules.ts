/**
 * Rules the store applies that are decisions, not SQL: written once here, each backend runs them
 * inside its own transaction.
 */
import { DeviceNotRegistered, StatusMoved } from '../core/errors.js';
import type { Device } from '../core/model.js';

/** What places a device in a washtower: its type and its group (null for any other device). */
export type GroupHalf = Pick<Device, 'deviceId' | 'deviceType' | 'groupId'>;

/**
 * Whether a pair holding `held` unexpired event subscriptions (counted as GET /event lists them) may
 * create one more; beyond, the API answers 1312. Renewing one it holds, even expired, is never refused.
 */
export function mayCreateEventSubscription(held: number, limit: number): boolean {
  return held < limit;
}

/**
 * Why a status write stored nothing, given the device's secret as stored now (undefined when it is
 * gone): the registration the write was for (its secret) is gone, the status moved since `from`, or
 * the device is unknown.
 */
export function statusNotWritten(deviceId: string, stored: string | undefined, from: number | undefined, secretHash: string | undefined): Error {
  if (secretHash !== undefined && stored !== secretHash) {
    return new DeviceNotRegistered(`Device ${deviceId} is no longer registered as it was when this change of its status came; the change is not stored.`);
  }
  if (from !== undefined && stored !== undefined) return new StatusMoved(deviceId);
  return unknownDevice(deviceId);
}

/** Why a push for a registration that is gone (the device's secret is no longer its) recorded nothing. */
export function pushNotRecorded(deviceId: string): Error {
  return new DeviceNotRegistered(`Device ${deviceId} is no longer registered as it was when its push came; the push is not recorded.`);
}

/** Why a status write for a device that is not registered stored nothing. */
export function unknownDevice(deviceId: string): Error {
  return new Error(`Device ${deviceId} is not registered; its report is not stored`);
}

/**
 * Why a device was not registered to a user, as its owner or by a share: the user's devices (shared
 * ones included) have another of its type in its group. A washtower is one washer and one dryer,
 * paired by groupId.
 */
export function groupHalfTaken(device: GroupHalf, userNumber: string): Error {
  return new Error(`User ${userNumber} has a ${device.deviceType} in group ${JSON.stringify(device.groupId)} already; the device is not registered to them`);
}
