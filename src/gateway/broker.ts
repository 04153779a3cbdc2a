/**
 * The embedded MQTT broker (aedes, DESIGN B): devices authenticate with their id and secret and may
 * touch only their own `appliance/{deviceId}/` topics. The cloud is no client of it: what a device
 * publishes is handed to the bridge in process, and commands are published by the broker itself.
 */
import { once } from 'node:events';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { Aedes, type AuthenticateError, type Client, type PublishPacket } from 'aedes';
import { hashSecret, isDeviceId, randomId, secretMatches } from '../ids.js';
import type { Store } from '../store/store.js';
import type { Bridge } from './bridge.js';
import type { GatewayLogger } from './logger.js';
import { mayPublish, maySubscribe } from './topics.js';

export interface EmbeddedBrokerOptions {
  /** 0 binds an ephemeral port. */
  port: number;
  host?: string;
  store: Pick<Store, 'getDevice'>;
  logger: GatewayLogger;
  /** Where device publishes go. */
  bridge: Pick<Bridge, 'take'>;
}

/** Compared against when the user name is no device, so that a miss costs as long as a wrong secret. */
const NO_DEVICE_HASH = hashSecret(randomId());

function asBuffer(payload: string | Buffer): Buffer {
  return typeof payload === 'string' ? Buffer.from(payload) : payload;
}

function refused(returnCode: 4 | 5, message: string): AuthenticateError {
  return Object.assign(new Error(message), { returnCode });
}

export class EmbeddedBroker {
  /** The device each authenticated client is. */
  private readonly identities = new WeakMap<Client, string>();
  private readonly deviceClients = new Set<Client>();
  private aedes: Aedes | null = null;
  private server: Server | null = null;

  constructor(private readonly options: EmbeddedBrokerOptions) {}

  /** Starts listening; returns the bound port. */
  async start(): Promise<number> {
    const aedes = await Aedes.createBroker({
      authenticate: (client, username, password, done) => {
        this.authenticate(client, username, password).then(
          (identity) => {
            this.identities.set(client, identity);
            done(null, true);
          },
          (error: AuthenticateError) => done(error, false),
        );
      },
      // Device publishes (and wills) are handled here, before aedes acknowledges them: a PUBACK means stored.
      authorizePublish: (client, packet, done) => {
        // client is null for the broker's own publications (wills of clients of a dead broker instance): a device's, as it left them.
        const deviceId = client ? this.identities.get(client) : undefined;
        if (client && !(deviceId !== undefined && mayPublish(deviceId, packet.topic))) {
          this.options.logger.warn({ clientId: client.id, topic: packet.topic }, 'MQTT publish refused: outside the topics of the device');
          return done(new Error(`not authorized to publish to ${packet.topic}`));
        }
        // A live publish, never a replay: a retained flag only asks the broker to keep it.
        const taken = this.options.bridge.take(packet.topic, asBuffer(packet.payload), false);
        // Refused while shutting down: no PUBACK, so the device sends it again to the next instance.
        if (!taken) return done(new Error('the gateway is shutting down'));
        void taken.then(() => done(null));
      },
      authorizeSubscribe: (client, subscription, done) => {
        const deviceId = this.identities.get(client);
        if (deviceId !== undefined && maySubscribe(deviceId, subscription.topic)) return done(null, subscription);
        this.options.logger.warn({ clientId: client.id, topic: subscription.topic }, 'MQTT subscription refused: a device may subscribe only to its own command topic');
        // A null subscription is refused in the SUBACK (0x80) without dropping the connection.
        done(null, null);
      },
    });
    aedes.on('clientReady', (client) => this.deviceClients.add(client));
    aedes.on('clientDisconnect', (client) => this.deviceClients.delete(client));
    const server = createServer((socket) => aedes.handle(socket));
    server.listen(this.options.port, this.options.host);
    try {
      await once(server, 'listening');
    } catch (error) {
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      throw error;
    }
    this.aedes = aedes;
    this.server = server;
    return (server.address() as AddressInfo).port;
  }

  /** Ids of the devices connected right now. */
  connectedDevices(): string[] {
    const ids = new Set<string>();
    for (const client of this.deviceClients) {
      const deviceId = this.identities.get(client);
      if (deviceId !== undefined) ids.add(deviceId);
    }
    return [...ids];
  }

  /** Whether it is listening (for /ready). */
  listening(): boolean {
    return this.server?.listening ?? false;
  }

  /** Publishes as the broker itself, QoS 1; resolves once the subscribers' copies are queued. */
  publish(topic: string, payload: string): Promise<void> {
    const { aedes } = this;
    if (!aedes) return Promise.reject(new Error('the embedded broker is not running'));
    const packet: PublishPacket = { cmd: 'publish', topic, payload: Buffer.from(payload), qos: 1, retain: false, dup: false };
    return new Promise((resolve, reject) => aedes.publish(packet, (error) => (error ? reject(error) : resolve())));
  }

  /** Disconnects every client and stops listening. */
  async close(): Promise<void> {
    const { aedes, server } = this;
    this.aedes = null;
    this.server = null;
    if (aedes) await new Promise<void>((resolve) => aedes.close(() => resolve()));
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /**
   * username = device id, password = its secret (hashed at rest, compared in constant time); the
   * client id must be the device id, so that no device can take over another's session by its id.
   */
  private async authenticate(client: Client, username: string | undefined, password: Buffer | undefined): Promise<string> {
    const secret = password?.toString('utf8') ?? '';
    const device = username !== undefined && isDeviceId(username) ? await this.options.store.getDevice(username) : undefined;
    const matches = secretMatches(secret, device?.secretHash ?? NO_DEVICE_HASH);
    if (!device || !matches) {
      this.options.logger.warn({ username, clientId: client.id }, 'MQTT connection refused: unknown device or wrong secret');
      throw refused(4, 'bad user name or password');
    }
    if (client.id !== device.deviceId) {
      this.options.logger.warn({ deviceId: device.deviceId, clientId: client.id }, 'MQTT connection refused: the client id must be the device id');
      throw refused(5, 'the client id must be the device id');
    }
    return device.deviceId;
  }
}
