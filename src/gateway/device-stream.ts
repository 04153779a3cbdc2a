/**
 * What devices send through an external broker (reports, pushes, connection flags), consumed by one
 * node of the deployment at a time, in the order the broker has it (DESIGN B, C).
 *
 * A shared subscription cannot keep a device's order: Mosquitto hands its members their turns one
 * message after another, whatever the topic, so two reports of one device went to two nodes, and
 * the second could be stored first (the chaos run on PostgreSQL applied 0–6 reports late per run).
 * Here the deployment has ONE persistent MQTT session (client id `appliance-cloud:{deployment}:devices`),
 * and only the node holding the store's lease of that name connects to it. The broker queues in it
 * whatever comes while no node is connected, and gives it to the next holder in order: first what
 * the last holder had not acknowledged, then the rest. A message is acknowledged only once stored,
 * and storing one again changes nothing (a status that already holds the report is no change).
 *
 * The holder renews its lease every third of LEASE_MS; one that cannot (it lost the database)
 * disconnects before the lease can run out, so that no two nodes consume at once. A node stopped
 * cleanly gives the lease up after its last message: another takes over at its next try.
 *
 * What the holder took but had not stored when it stopped holding (a message in hand, a write
 * waiting on a slow database, a process paused) is not stored by it after that: Devices asks the
 * holding whether it still runs (`consuming`) after reading the status a report is worked out from,
 * and the holding ends by the clock, two thirds of the lease after it was asked for, even while the
 * event loop is too busy to run the timer that disconnects. The next holder gets those messages again.
 */
import type { MqttClient } from 'mqtt';
import { DEVICE_FILTERS } from '../device-protocol/topics.js';
import type { Store } from '../store/store.js';
import { connectService, consumeFrom, type Bridge, type Consumer } from './bridge.js';
import type { FaultReporting } from './guard.js';
import type { GatewayLogger } from './logger.js';

/** How long a lease runs unrenewed; a node killed holding it is taken over after at most this. */
export const LEASE_MS = 3000;

/**
 * How long the broker keeps the deployment's session with no node connected: what devices send
 * meanwhile waits there (up to the broker's own queue limit) for the next node to start.
 */
export const DEVICE_SESSION_EXPIRY_S = 86_400;

/** MQTT 5's reason code for a connection ended because another took its session over. */
const SESSION_TAKEN_OVER = 0x8e;

export interface DeviceStreamOptions {
  url: string;
  /** The deployment's name: its session and its lease. */
  deployment: string;
  /** This node, as the lease's holder. */
  node: string;
  leases: Pick<Store, 'holdLease' | 'releaseLease'>;
  bridge: Bridge;
  reporting: FaultReporting;
  logger: GatewayLogger;
  leaseMs?: number;
  sessionExpiryS?: number;
}

export interface DeviceStream {
  /** Whether this node consumes the stream now. */
  holding(): boolean;
  /** False while this node holds the stream and its connection is down, or the broker refused it the stream at its last turn. */
  healthy(): boolean;
  /** Stops trying; the holder hands over what it took, then gives the lease up. */
  close(): Promise<void>;
}

/** Starts taking part; resolves once the first try is done, consuming if the lease was free. */
export async function startDeviceStream(options: DeviceStreamOptions): Promise<DeviceStream> {
  const { leases, deployment, node, logger } = options;
  const leaseMs = options.leaseMs ?? LEASE_MS;
  const leaseName = `mqtt devices ${deployment}`;
  let held: { client: MqttClient; consumer: Consumer; expiry: NodeJS.Timeout; lease: Lease } | null = null;
  let closed = false;
  /** The lease was this node's, and it could not consume the stream (the broker refused it): not healthy. */
  let cannotConsume = false;

  /** Ends consuming; `handOver`: after the message in flight, as in a clean stop. */
  const release = async (handOver: boolean): Promise<void> => {
    const current = held;
    if (!current) return;
    held = null;
    clearTimeout(current.expiry);
    // A clean stop still holds the lease: the message in hand is stored, then given up.
    if (handOver) await current.consumer.stop();
    else void current.consumer.stop();
    current.lease.ended = true;
    // The session stays with the broker, for the next holder.
    await current.client.endAsync(!handOver).catch((error: unknown) => logger.warn({ err: error }, 'MQTT disconnect failed'));
  };

  const consume = async (lease: Lease): Promise<{ client: MqttClient; consumer: Consumer }> => {
    const client = await connectService({
      url: options.url,
      clientId: `appliance-cloud:${deployment}:devices`,
      sessionExpiryS: options.sessionExpiryS ?? DEVICE_SESSION_EXPIRY_S,
      logger,
    });
    client.on('packetreceive', (packet) => {
      if (packet.cmd === 'disconnect' && packet.reasonCode === SESSION_TAKEN_OVER) {
        logger.warn({ deployment }, 'Another node took the device stream over; this one stops consuming it');
        void release(false);
      }
    });
    try {
      return { client, consumer: await consumeFrom(client, options.bridge, [...DEVICE_FILTERS], options.reporting, () => runs(lease)) };
    } catch (error) {
      await client.endAsync(true);
      throw error;
    }
  };

  const attempt = async (): Promise<void> => {
    const askedAt = performance.now();
    let holds = false;
    try {
      holds = await leases.holdLease(leaseName, node, leaseMs);
    } catch (error) {
      logger.warn({ err: error }, 'Could not renew the lease of the device stream');
      return; // the expiry timer ends consuming if this goes on
    }
    if (closed) return;
    if (!holds) {
      if (held) logger.warn({ deployment }, 'The lease of the device stream went to another node; this one stops consuming it');
      cannotConsume = false;
      return release(false);
    }
    // Stop a third of the lease before the database would let another node take it.
    const until = askedAt + (leaseMs * 2) / 3;
    const expiry = setTimeout(() => {
      logger.warn({ deployment }, 'The lease of the device stream could not be renewed; this node stops consuming it');
      void release(false);
    }, until - performance.now());
    if (held) {
      clearTimeout(held.expiry);
      held.expiry = expiry;
      held.lease.until = until;
      return;
    }
    const lease: Lease = { until, ended: false };
    try {
      const started = await consume(lease);
      held = { ...started, expiry, lease };
      cannotConsume = false;
      logger.info({ deployment }, 'This node consumes the device stream');
    } catch (error) {
      clearTimeout(expiry);
      cannotConsume = true;
      // Given up at once: renewed by a node that cannot consume, it would keep every other node from the stream.
      logger.error({ err: error }, 'Could not consume the device stream; its lease is given up for another node, and this one tries again');
      await leases.releaseLease(leaseName, node).catch((releaseError: unknown) => logger.warn({ err: releaseError }, 'Could not give the lease of the device stream up'));
    }
  };

  let trying: Promise<void> | null = attempt();
  await trying;
  trying = null;
  // One try at a time: a database that answers slowly delays the next one.
  const timer = setInterval(() => {
    trying ??= attempt().finally(() => {
      trying = null;
    });
  }, leaseMs / 3);

  return {
    holding: () => held !== null && runs(held.lease),
    healthy: () => !cannotConsume && (held === null || held.client.connected),
    async close() {
      closed = true;
      clearInterval(timer);
      await trying;
      const wasHolding = held !== null;
      await release(true);
      if (wasHolding) await leases.releaseLease(leaseName, node).catch((error: unknown) => logger.warn({ err: error }, 'Could not give the lease of the device stream up'));
    },
  };
}

/** One holding of the stream, as this node counts it: until `until` (performance.now()), unless it ended before. */
interface Lease {
  until: number;
  ended: boolean;
}

function runs(lease: Lease): boolean {
  return !lease.ended && performance.now() < lease.until;
}
