/**
 * A device maker's reference client for the contract of DESIGN B: connects as one device with its
 * secret, announces itself online (retained, with the offline will), reports state and pushes, and
 * answers commands through a handler.
 */
import { connectAsync, type IClientOptions, type MqttClient } from 'mqtt';
import type { DeviceStatus, JsonObject } from '../catalog/types.js';
import { decodeCommand, encodeCommandResult, encodeConnection, encodePush, encodeReport } from './codec.js';
import { topicOf } from './topics.js';

/** What a device answers to a command: the status after it, or a refusal (code 2208 when left out). */
export type CommandReply = { ok: true; status: DeviceStatus } | { ok: false; code?: string; message?: string };

export type CommandHandler = (command: JsonObject) => CommandReply | Promise<CommandReply>;

export interface DeviceClientOptions {
  /** `mqtt://host:port` (or `mqtts://`, `ws://`). */
  url: string;
  deviceId: string;
  /** The deviceSecret returned at registration. */
  secret: string;
  /** Without one, every command is refused. */
  onCommand?: CommandHandler;
  /** Seconds; the broker fires the will after 1.5 times this without a packet. */
  keepalive?: number;
  /** Milliseconds between reconnection attempts; 0 turns reconnection off. */
  reconnectPeriod?: number;
  /** false keeps the device's session on the broker between connections (its subscription); default true. */
  clean?: boolean;
  /** The MQTT version spoken: 4 (3.1.1, the default) or 5. */
  protocolVersion?: 4 | 5;
}

const QOS1 = { qos: 1 } as const;

/** MQTT 5's session expiry that means never (MQTT 5.0, 3.1.2.11.2). */
const SESSION_KEPT = 0xffffffff;

export class DeviceClient {
  private constructor(
    /** The underlying mqtt.js client (tests cut its stream to play a crash). */
    readonly mqtt: MqttClient,
    private readonly options: DeviceClientOptions,
  ) {}

  /** Connects, subscribes to its commands and announces itself online; rejects on a wrong secret. */
  static async connect(options: DeviceClientOptions): Promise<DeviceClient> {
    const { deviceId, secret } = options;
    const settings: IClientOptions = {
      clientId: deviceId,
      username: deviceId,
      password: secret,
      clean: options.clean ?? true,
      protocolVersion: options.protocolVersion ?? 4,
      // MQTT 5 keeps a session past its connection only with an expiry: this one never expires, as in 3.1.1.
      ...(options.protocolVersion === 5 && options.clean === false ? { properties: { sessionExpiryInterval: SESSION_KEPT } } : {}),
      keepalive: options.keepalive ?? 30,
      reconnectPeriod: options.reconnectPeriod ?? 1000,
      will: { topic: topicOf(deviceId, 'connection'), payload: Buffer.from(encodeConnection({ online: false })), qos: 1, retain: true },
    };
    // No retries on the first attempt, so that a refused secret rejects instead of retrying forever.
    const mqtt = await connectAsync(options.url, settings, false);
    const device = new DeviceClient(mqtt, options);
    // A connection the broker drops is also reported as an error (ECONNRESET); mqtt.js reconnects by
    // itself, so it is no reason to end the device's process, which an unheard 'error' would.
    mqtt.on('error', () => undefined);
    mqtt.on('message', (topic, payload) => {
      if (topic === topicOf(deviceId, 'command')) void device.answer(payload);
    });
    try {
      await mqtt.subscribeAsync(topicOf(deviceId, 'command'), QOS1);
      await device.announce();
    } catch (error) {
      await mqtt.endAsync(true);
      throw error;
    }
    // After a drop the will has said offline; mqtt.js resubscribes by itself, the device says online again.
    mqtt.on('connect', () => void device.announce().catch(() => undefined));
    return device;
  }

  get deviceId(): string {
    return this.options.deviceId;
  }

  /** A partial status, e.g. `{ runState: { currentState: 'RUNNING' } }`. */
  async report(status: DeviceStatus): Promise<void> {
    await this.mqtt.publishAsync(topicOf(this.deviceId, 'state'), encodeReport(status), QOS1);
  }

  /**
   * A notification code of the device's profile, e.g. `WASHING_IS_COMPLETE`; at QoS 2, since a QoS 1
   * push sent again after its acknowledgement was lost (a dropped link) would tell the partner twice.
   */
  async push(pushCode: string): Promise<void> {
    await this.mqtt.publishAsync(topicOf(this.deviceId, 'push'), encodePush({ pushCode }), { qos: 2 });
  }

  /** Says offline (a clean disconnect does not fire the will) and disconnects. */
  async close(): Promise<void> {
    if (this.mqtt.connected) {
      await this.mqtt.publishAsync(topicOf(this.deviceId, 'connection'), encodeConnection({ online: false }), { qos: 1, retain: true });
    }
    await this.mqtt.endAsync(!this.mqtt.connected);
  }

  private async announce(): Promise<void> {
    await this.mqtt.publishAsync(topicOf(this.deviceId, 'connection'), encodeConnection({ online: true }), { qos: 1, retain: true });
  }

  /** Every command gets a result, a failing handler's too (A.7: never silence); one without a commandId cannot be answered. */
  private async answer(payload: Buffer): Promise<void> {
    const message = decodeCommand(payload);
    if (!message.ok) return;
    const { commandId, command } = message.value;
    let reply: CommandReply;
    try {
      reply = this.options.onCommand ? await this.options.onCommand(command) : { ok: false, message: 'This device takes no commands.' };
    } catch (error) {
      reply = { ok: false, code: '2208', message: error instanceof Error ? error.message : String(error) };
    }
    const result = reply.ok
      ? { commandId, ok: true as const, status: reply.status }
      : { commandId, ok: false as const, code: reply.code ?? null, message: reply.message ?? null };
    await this.mqtt.publishAsync(topicOf(this.deviceId, 'command/result'), encodeCommandResult(result), QOS1).catch(() => undefined);
  }
}
