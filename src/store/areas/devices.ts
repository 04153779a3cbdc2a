/** Devices, the users they are registered to, and their status; every change records its messages. */
import type { DeviceStatus } from '../../catalog/types.js';
import type { Device, DeviceState, NewDevice } from '../../core/model.js';
import type { Eventually } from '../../eventually.js';

/** A device's state with its status as the JSON text stored: a status read splices it into the answer unparsed. */
export interface DeviceStatusJson {
  statusJson: string;
  version: number;
  online: boolean;
}

/** A report and the whole status it leaves (which already includes it). */
export interface StatusChange {
  status: DeviceStatus;
  report: DeviceStatus;
}

export interface DevicesArea {
  /**
   * Registers a device to its owner, with its first status (version 1); records DEVICE_REGISTERED.
   * Rejects, writing nothing, when the device id is taken, the owner is unknown, or the device has a
   * group (a washtower half) in which the owner's devices have one of its type already: checked in
   * the same transaction, so that of two registrations of one half at once, one is refused.
   */
  registerDevice(device: NewDevice, ownerUserNumber: string, at: number): Promise<Device>;
  /**
   * Registers an existing device to one more user of the home; records DEVICE_REGISTERED. false when
   * either is unknown or it is already theirs. Rejects, writing nothing, a washtower half of a type
   * the user's devices have in its group already: checked as registerDevice checks it, so that of a
   * share and a registration (or two shares) of one half to the user at once, one is refused.
   */
  shareDevice(deviceId: string, userNumber: string, at: number): Promise<boolean>;
  /**
   * Unregisters a device from one user: records DEVICE_UNREGISTERED, deletes that user's subscriptions
   * to it, and deletes the device itself when no user is left.
   */
  unregisterDevice(deviceId: string, userNumber: string, at: number): Promise<boolean>;
  /** Renames a device; records DEVICE_ALIAS_CHANGED unless the alias is unchanged. undefined when unknown. */
  renameDevice(deviceId: string, alias: string, at: number): Promise<Device | undefined>;
  getDevice(deviceId: string): Promise<Device | undefined>;
  /** Devices registered to the user (owned or shared), oldest first. */
  listUserDevices(userNumber: string): Promise<Device[]>;
  /** Every virtual appliance, oldest first: the simulator adopts them at start. */
  listVirtualDevices(): Promise<Device[]>;

  getDeviceState(deviceId: string): Promise<DeviceState | undefined>;
  getDeviceStatusJson(deviceId: string): Eventually<DeviceStatusJson | undefined>;
  /**
   * Replaces the device's status with `status` (which already includes `report`), increments its
   * version, and records DEVICE_STATUS with `report` for each service holding an unexpired event
   * subscription. An empty report changes nothing and returns the current version. Rejects when the
   * device is unknown. Given `from`, the version the status was worked out from: when the stored
   * version is another (another process wrote the status since), it stores nothing and rejects with
   * StatusMoved (core/errors.ts). Given `secretHash`, the registration the change is for (each
   * registration of an id has a secret of its own): when the device is no longer registered with
   * it (unregistered, maybe registered again since), it stores nothing and rejects with DeviceNotRegistered.
   */
  applyReport(deviceId: string, status: DeviceStatus, report: DeviceStatus, at: number, from?: number, secretHash?: string): Promise<number>;
  /**
   * The reports of one device in order, in one write, as many applyReport calls would leave them: the
   * status of the last that is not empty, the version up by one and DEVICE_STATUS recorded per report
   * that is not empty. Returns the version after the last; rejects, storing none, when the device is
   * unknown, and as applyReport does when `from` is not the stored version or `secretHash` not the registration's.
   */
  applyReports(deviceId: string, reports: StatusChange[], at: number, from?: number, secretHash?: string): Promise<number>;
  /**
   * Records DEVICE_PUSH for each service with a push subscription to the device (none for an unknown
   * one). Given `secretHash`, the registration the push is for: when the device is no longer
   * registered with it, it records nothing and rejects with DeviceNotRegistered, as applyReport does.
   */
  recordPush(deviceId: string, pushCode: string, at: number, secretHash?: string): Promise<void>;
  /**
   * Whether the device is connected; false when it is not registered, or (given `secretHash`) no
   * longer with the registration the change is for, and nothing is changed.
   */
  setOnline(deviceId: string, online: boolean, secretHash?: string): Promise<boolean>;
  /** How many devices are connected now (a gauge of /metrics). */
  countOnlineDevices(): Promise<number>;
  /** Marks every real device offline; the ids of those that were online. */
  setRealDevicesOffline(): Promise<string[]>;
}
