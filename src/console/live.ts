/**
 * Live device pages on any node (DESIGN H): status changes reach the store from whichever node or
 * device made them, so each node polls the store for the devices its open pages watch — one cheap
 * read per watched device per interval, shared by all its pages — and tells them when the version
 * or the connection changed. It works the same on SQLite and on PostgreSQL with many nodes.
 */
import type { Store } from '../store/store.js';

export const POLL_INTERVAL_MS = 500;

export interface LiveState {
  version: number;
  online: boolean;
  statusJson: string;
}

type Listener = (state: LiveState) => void;

interface Watched {
  listeners: Set<Listener>;
  last: LiveState | null;
  timer: NodeJS.Timeout;
  /** A read is under way. */
  reading: boolean;
}

export class DeviceWatch {
  readonly #devices = new Map<string, Watched>();

  constructor(
    private readonly store: Pick<Store, 'getDeviceStatusJson'>,
    private readonly intervalMs = POLL_INTERVAL_MS,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  /** Calls `listener` with the device's state now and after each change; returns the unsubscribe. */
  watch(deviceId: string, listener: Listener): () => void {
    let watched = this.#devices.get(deviceId);
    if (!watched) {
      const timer = setInterval(() => void this.#poll(deviceId), this.intervalMs);
      timer.unref();
      watched = { listeners: new Set(), last: null, timer, reading: false };
      this.#devices.set(deviceId, watched);
    }
    watched.listeners.add(listener);
    if (watched.last) listener(watched.last);
    else void this.#poll(deviceId);
    return () => {
      const current = this.#devices.get(deviceId);
      if (!current) return;
      current.listeners.delete(listener);
      if (current.listeners.size === 0) {
        clearInterval(current.timer);
        this.#devices.delete(deviceId);
      }
    };
  }

  close(): void {
    for (const watched of this.#devices.values()) clearInterval(watched.timer);
    this.#devices.clear();
  }

  async #poll(deviceId: string): Promise<void> {
    const watched = this.#devices.get(deviceId);
    // One read at a time: a slow store is not read again meanwhile, and an older answer cannot follow a newer one.
    if (!watched || watched.reading) return;
    watched.reading = true;
    let state: LiveState | undefined;
    try {
      state = await this.store.getDeviceStatusJson(deviceId);
    } catch (error) {
      this.onError(error);
      return;
    } finally {
      watched.reading = false;
    }
    if (!state || this.#devices.get(deviceId) !== watched) return;
    const { last } = watched;
    if (last && last.version === state.version && last.online === state.online) return;
    watched.last = state;
    for (const listener of watched.listeners) listener(state);
  }
}
