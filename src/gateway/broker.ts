/**
 * The embedded MQTT broker (aedes, DESIGN B): devices authenticate with their id and secret and may
 * touch only their own `appliance/{deviceId}/` topics; the cloud itself connects to it like to an
 * external broker, as one privileged client, so that the bridge has a single code path.
 */
import { once } from 'node:events';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { Aedes, type AuthenticateError, type Client } from 'aedes';
import { hashSecret, isDeviceId, randomId, secretMatches } from '../ids.js';
import type { Store } from '../store/store.js';
import type { GatewayLogger } from './logger.js';
import { mayPublish, maySubscribe } from './topics.js';

/** The cloud's own user name: never a device id, since `$` is outside `[A-Za-z0-9_-]`. */
const SERVICE_USERNAME = '$appliance-cloud';

type Identity = { kind: 'service' } | { kind: 'device'; deviceId: string };

export interface EmbeddedBrokerOptions {
  /** 0 binds an ephemeral port. */
  port: number;
  host?: string;
  store: Pick<Store, 'getDevice'>;
  logger: GatewayLogger;
}

/** Compared against when the user name is no device, so that a miss costs as long as a wrong secret. */
const NO_DEVICE_HASH = hashSecret(randomId());

function refused(returnCode: 4 | 5, message: string): AuthenticateError {
  return Object.assign(new Error(message), { returnCode });
}

export class EmbeddedBroker {
  /** Valid for this process only: the cloud connects with it over loopback. */
  readonly serviceCredentials = { username: SERVICE_USERNAME, password: randomId(32) };
  private readonly identities = new WeakMap<Client, Identity>();
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
      authorizePublish: (client, packet, done) => {
        // client is null for the broker's own publications (wills of clients of a dead broker instance).
        const identity = client ? this.identities.get(client) : { kind: 'service' as const };
        if (identity?.kind === 'service' || (identity?.kind === 'device' && mayPublish(identity.deviceId, packet.topic))) return done(null);
        this.options.logger.warn({ clientId: client?.id, topic: packet.topic }, 'MQTT publish refused: outside the topics of the device');
        done(new Error(`not authorized to publish to ${packet.topic}`));
      },
      authorizeSubscribe: (client, subscription, done) => {
        const identity = this.identities.get(client);
        if (identity?.kind === 'service' || (identity?.kind === 'device' && maySubscribe(identity.deviceId, subscription.topic))) {
          return done(null, subscription);
        }
        this.options.logger.warn({ clientId: client.id, topic: subscription.topic }, 'MQTT subscription refused: a device may subscribe only to its own command topic');
        // A null subscription is refused in the SUBACK (0x80) without dropping the connection.
        done(null, null);
      },
    });
    aedes.on('clientReady', (client) => {
      if (this.identities.get(client)?.kind === 'device') this.deviceClients.add(client);
    });
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
      const identity = this.identities.get(client);
      if (identity?.kind === 'device') ids.add(identity.deviceId);
    }
    return [...ids];
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
  private async authenticate(client: Client, username: string | undefined, password: Buffer | undefined): Promise<Identity> {
    const secret = password?.toString('utf8') ?? '';
    if (username === SERVICE_USERNAME) {
      if (secretMatches(secret, hashSecret(this.serviceCredentials.password))) return { kind: 'service' };
      throw refused(4, 'bad user name or password');
    }
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
    return { kind: 'device', deviceId: device.deviceId };
  }
}
