/**
 * The simulator's sink for appliances that live in this process but reach the cloud over MQTT.
 *
 * In the server, the Simulator hands what its engine computes to Devices, which stores it. Here the
 * device itself is the source of truth: it keeps its own status, and each report or push the engine
 * makes is published on the device's topics (DESIGN B), where the cloud validates and stores it
 * exactly as it would a real appliance's. The Simulator is unchanged: this class offers the five
 * calls of Devices it uses.
 */
import { getModel, mergeStatus, parsedProfile } from '../../catalog/index.js';
import type { CatalogModel, DeviceStatus } from '../../catalog/types.js';
import type { Devices } from '../../core/devices.js';
import { encodeConnection } from '../../device-protocol/codec.js';
import type { DeviceClient } from '../../device-protocol/device-client.js';
import { topicOf } from '../../device-protocol/topics.js';
import { fail } from '../../errors.js';
import type { Device, DeviceState } from '../../core/model.js';

/** What a device needs to connect: its id and secret (from registration), and what it is. */
export interface DeviceCredentials {
  deviceId: string;
  secret: string;
  deviceType: string;
  modelName: string;
}

interface Appliance {
  /** The record the Simulator reads its model from. */
  device: Device;
  model: CatalogModel;
  status: DeviceStatus;
  version: number;
  client: DeviceClient | null;
}

/** The calls of Devices the Simulator makes (SimulatorDeps.devices). */
export type SimulatorSink = Pick<Devices, 'get' | 'state' | 'report' | 'push' | 'setConnection'>;

export class LocalDevices implements SimulatorSink {
  private readonly appliances = new Map<string, Appliance>();

  /** Adds a device with its model's default status: what a freshly registered appliance holds. */
  add(credentials: DeviceCredentials): Device {
    const model = getModel(credentials.deviceType, credentials.modelName);
    if (!model) throw fail('1102', `${credentials.deviceType}/${credentials.modelName} is not a model in the catalog.`);
    // The Simulator reads deviceId, deviceType and modelName, and acts (`simulator.act`) only on a
    // virtual device: this one is simulated here, though the cloud knows it as a real one.
    const device: Device = {
      deviceId: credentials.deviceId,
      deviceType: model.deviceType,
      modelName: model.modelName,
      alias: credentials.deviceId,
      groupId: null,
      secretHash: '',
      virtual: true,
      online: false,
      userNumbers: [],
      createdAt: 0,
    };
    this.appliances.set(device.deviceId, { device, model, status: structuredClone(model.defaultStatus), version: 1, client: null });
    return device;
  }

  /** Routes a device's reports and pushes through its connected client. */
  attach(deviceId: string, client: DeviceClient): void {
    this.appliance(deviceId).client = client;
  }

  list(): Device[] {
    return [...this.appliances.values()].map((a) => a.device);
  }

  clients(): DeviceClient[] {
    return [...this.appliances.values()].flatMap((a) => (a.client ? [a.client] : []));
  }

  async get(deviceId: string): Promise<Device> {
    return this.appliance(deviceId).device;
  }

  /** Online while the MQTT session is up: an appliance cut off from its broker stands still, as in the cloud. */
  async state(deviceId: string): Promise<DeviceState> {
    const { status, version, client } = this.appliance(deviceId);
    return { deviceId, status, version, online: client?.mqtt.connected ?? false };
  }

  /**
   * Takes the change into the device's own status, then publishes it (QoS 1, resolved on the
   * broker's ack). The engine only reports values of the profile; the cloud checks them anyway.
   */
  async report(deviceId: string, report: unknown): Promise<DeviceState> {
    const appliance = this.appliance(deviceId);
    appliance.status = mergeStatus(parsedProfile(appliance.model), appliance.status, report as DeviceStatus);
    appliance.version += 1;
    await this.connected(appliance).report(report as DeviceStatus);
    return this.state(deviceId);
  }

  async push(deviceId: string, pushCode: unknown): Promise<void> {
    await this.connected(this.appliance(deviceId)).push(String(pushCode));
  }

  /** What `sim act … go-offline|go-online` would do: say so on the retained connection topic. */
  async setConnection(deviceId: string, online: boolean): Promise<void> {
    const client = this.connected(this.appliance(deviceId));
    await client.mqtt.publishAsync(topicOf(deviceId, 'connection'), encodeConnection({ online }), { qos: 1, retain: true });
  }

  /** A command the device accepted: its status is now the one it answered with. */
  commandApplied(deviceId: string, status: DeviceStatus): void {
    const appliance = this.appliance(deviceId);
    appliance.status = status;
    appliance.version += 1;
  }

  /** Publishes the device's whole status, so that the cloud holds what the device holds. */
  async reportAll(deviceId: string): Promise<void> {
    const appliance = this.appliance(deviceId);
    await this.connected(appliance).report(appliance.status);
  }

  private appliance(deviceId: string): Appliance {
    const appliance = this.appliances.get(deviceId);
    if (!appliance) throw fail('1205', `Device ${deviceId} is not simulated here.`);
    return appliance;
  }

  private connected(appliance: Appliance): DeviceClient {
    if (!appliance.client) throw fail('1222', `Device ${appliance.device.deviceId} is not connected.`);
    return appliance.client;
  }
}
