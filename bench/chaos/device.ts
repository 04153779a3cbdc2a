/**
 * A ceiling fan of the chaos load, over MQTT as DESIGN B has it, with a persistent session
 * (`clean: false`): a report whose PUBACK has not come is kept and sent again after a reconnect, so
 * that a PUBACK means the cloud has it. It answers every command with the command applied and a
 * counter of its own, `{"chaos": {"control": n}}`, which the partner's 200 then shows.
 */
import { connectAsync, type MqttClient } from 'mqtt';
import { decodeCommand, encodeCommandResult } from '../../src/device-protocol/codec.js';
import { topicOf } from '../../src/device-protocol/topics.js';

const QOS1 = { qos: 1 } as const;

export class ChaosDevice {
  /** The last control counter answered. */
  #controls = 0;
  #closing: Promise<void> | null = null;

  private constructor(
    readonly deviceId: string,
    private readonly mqtt: MqttClient,
  ) {}

  /** Connects (the first attempt must succeed), subscribes to its commands and says it is online, again after every reconnect. */
  static async connect(url: string, deviceId: string, secret: string): Promise<ChaosDevice> {
    const mqtt = await connectAsync(
      url,
      { clientId: deviceId, username: deviceId, password: secret, clean: false, protocolVersion: 4, keepalive: 10, reconnectPeriod: 250, connectTimeout: 5000 },
      false,
    );
    const device = new ChaosDevice(deviceId, mqtt);
    mqtt.on('message', (topic, payload) => {
      if (topic === topicOf(deviceId, 'command')) device.#answer(payload);
    });
    // A broker that restarted has no session: mqtt.js subscribes again by itself, and the device says it is online.
    mqtt.on('connect', () => device.#announce());
    await mqtt.subscribeAsync(topicOf(deviceId, 'command'), QOS1);
    device.#announce();
    return device;
  }

  /** Publishes a report at QoS 1; resolves on its PUBACK, however many reconnects that takes. */
  async report(payload: string): Promise<void> {
    await this.mqtt.publishAsync(topicOf(this.deviceId, 'state'), payload, QOS1);
  }

  /** Drops the connection without a goodbye; once, however often it is called. */
  close(): Promise<void> {
    this.#closing ??= this.mqtt.endAsync(true);
    return this.#closing;
  }

  #announce(): void {
    this.mqtt.publish(topicOf(this.deviceId, 'connection'), '{"online":true}', { qos: 1, retain: true });
  }

  #answer(payload: Buffer): void {
    const message = decodeCommand(payload);
    if (!message.ok) return;
    const { commandId, command } = message.value;
    const status = { ...command, chaos: { control: ++this.#controls } };
    this.mqtt.publish(topicOf(this.deviceId, 'command/result'), encodeCommandResult({ commandId, ok: true, status }), QOS1);
  }
}
