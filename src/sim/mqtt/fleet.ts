/**
 * Virtual appliances as real MQTT clients (DESIGN B): each device connects to the broker with its
 * own id and secret, answers commands with the rules of the in-server virtual appliance, and lives
 * over time through the same Simulator, whose reports and pushes go out on the device's topics.
 *
 * This is also the device maker's reference client: a firmware does what one appliance here does.
 *   1. connect with username = deviceId, password = secret, a retained `{"online":false}` will;
 *   2. say `{"online":true}` (retained) and report the whole status;
 *   3. answer each `command` with a `command/result` carrying its commandId;
 *   4. report each change (QoS 1) and push each notification as it happens;
 *   5. on shutdown, say `{"online":false}` (retained) and disconnect.
 * Steps 1, 2, 3 and 5 are DeviceClient's; 4 is the engine's, through LocalDevices.
 */
import { DEVICE_TYPES, getModel } from '../../catalog/index.js';
import type { JsonObject } from '../../catalog/types.js';
import { DeviceClient, type CommandReply } from '../../device-protocol/device-client.js';
import { fail } from '../../errors.js';
import { systemClock } from '../../ids.js';
import type { Device } from '../../core/model.js';
import { timerScheduler, type Scheduler } from '../scheduler.js';
import { Simulator } from '../simulator.js';
import { LocalDevices, type DeviceCredentials } from './local-devices.js';

export type { DeviceCredentials } from './local-devices.js';

export interface FleetOptions {
  /** The broker, e.g. `mqtt://127.0.0.1:1883`. */
  mqttUrl: string;
  /** The MQTT version the devices speak: 4 (3.1.1, the default) or 5. */
  protocolVersion?: 4 | 5;
  devices: DeviceCredentials[];
  /** 1 = real time (one engine step per minute). */
  timeScale: number;
  /** Told about a simulated minute or a publish that failed; the fleet carries on. */
  onError: (error: unknown, deviceId: string) => void;
  scheduler?: Scheduler;
  /** How many devices connect at the same time: a broker is not made to take thousands of CONNECTs in one burst. */
  connectConcurrency?: number;
}

export interface Fleet {
  simulator: Simulator;
  deviceIds: string[];
  /** Stops the engine, then each device says offline and disconnects. */
  stop(): Promise<void>;
}

const DEFAULT_CONNECT_CONCURRENCY = 50;

/** Connects every device and starts their simulated lives; rejects (closing those connected) if one cannot connect. */
export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const local = new LocalDevices();
  const devices = options.devices.map((credentials) => local.add(credentials));
  const simulator = new Simulator({
    devices: local,
    listVirtualDevices: async () => local.list(),
    // Scenarios pick their devices among these too.
    listUserDevices: async () => local.list(),
    clock: systemClock,
    scheduler: options.scheduler ?? timerScheduler,
    timeScale: options.timeScale,
    onError: options.onError,
  });

  /** The same rules as a virtual appliance in the server (Simulator.sendCommand → applyCommand). */
  const answer = async (device: Device, command: JsonObject): Promise<CommandReply> => {
    const { status } = await local.state(device.deviceId);
    const outcome = await simulator.sendCommand(device, status, command);
    if (!outcome.ok) return outcome;
    local.commandApplied(device.deviceId, outcome.status);
    return outcome;
  };

  const connectOne = async (device: Device, secret: string): Promise<void> => {
    const client = await DeviceClient.connect({
      url: options.mqttUrl,
      deviceId: device.deviceId,
      secret,
      protocolVersion: options.protocolVersion ?? 4,
      onCommand: (command) => answer(device, command),
    });
    local.attach(device.deviceId, client);
    await local.reportAll(device.deviceId);
    // After a reconnection the cloud may have missed reports: the device tells it where it stands.
    client.mqtt.on('connect', () => void local.reportAll(device.deviceId).catch((error: unknown) => options.onError(error, device.deviceId)));
  };

  const stop = async () => {
    await simulator.stop();
    await Promise.allSettled(local.clients().map((client) => client.close()));
  };

  try {
    await inBatches(devices, options.connectConcurrency ?? DEFAULT_CONNECT_CONCURRENCY, (device, i) =>
      connectOne(device, options.devices[i]!.secret).catch((error: unknown) => {
        throw new Error(`device ${device.deviceId} could not connect: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }),
    );
    await simulator.start();
  } catch (error) {
    await stop();
    throw error;
  }
  return { simulator, deviceIds: devices.map((d) => d.deviceId), stop };
}

/** Runs `work` on every item, at most `size` at a time. */
async function inBatches<T>(items: T[], size: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  for (let start = 0; start < items.length; start += size) {
    await Promise.all(items.slice(start, start + size).map((item, offset) => work(item, start + offset)));
  }
}

/**
 * Reads a `--devices` file: the line `sim devices` printed (`{mqttUrl, devices}`), kept as it is, or
 * its `devices` alone, `[{deviceId, secret, deviceType, modelName}]`.
 */
export function parseDeviceList(value: unknown): DeviceCredentials[] {
  const printed = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as { devices?: unknown }).devices : value;
  if (!Array.isArray(printed)) {
    throw fail('1102', 'The devices file must hold the line sim devices printed, or a JSON array of {deviceId, secret, deviceType, modelName}.');
  }
  return printed.map((entry: unknown, i) => {
    const { deviceId, secret, deviceType, modelName } = (entry ?? {}) as Record<string, unknown>;
    const where = `devices[${i}]`;
    if (typeof deviceId !== 'string' || deviceId === '') throw fail('1102', `${where}.deviceId must be a non-empty string.`);
    if (typeof secret !== 'string' || secret === '') throw fail('1102', `${where}.secret must be a non-empty string.`);
    if (typeof deviceType !== 'string' || !DEVICE_TYPES.includes(deviceType)) throw fail('1102', `${where}.deviceType must be one of ${DEVICE_TYPES.join(', ')}.`);
    const model = getModel(deviceType, typeof modelName === 'string' ? modelName : undefined);
    if (!model) throw fail('1102', `${where}.modelName ${JSON.stringify(modelName)} is not a model of ${deviceType} in the catalog.`);
    return { deviceId, secret, deviceType, modelName: model.modelName };
  });
}
