/**
 * A simulated household for the simulator's tests: a real SQLite store in memory, a real Devices
 * from createContext, a service subscribed (push and event) to every device, and a manual clock
 * and scheduler, so that minutes pass only when a test says so.
 */
import { DEVICE_TYPES } from '../../src/catalog/index.js';
import type { DeviceStatus, JsonObject } from '../../src/catalog/types.js';
import { loadConfig } from '../../src/config.js';
import { createContext, type ContextWithSimulator } from '../../src/context.js';
import type { Clock } from '../../src/ids.js';
import { demoCountry } from '../../src/regions.js';
import type { Scheduler } from '../../src/sim/scheduler.js';
import { testStore } from '../helpers/app.js';

const MINUTE = 60_000;

/** A scheduler and clock that move only when advanced; due tasks run in time order, each awaited. */
export class ManualScheduler implements Scheduler, Clock {
  private time = Date.UTC(2026, 0, 5, 8, 0);
  private tasks: { due: number; task: () => Promise<void>; cancelled: boolean }[] = [];

  now(): number {
    return this.time;
  }

  after(delayMs: number, task: () => Promise<void>): () => void {
    const entry = { due: this.time + delayMs, task, cancelled: false };
    this.tasks.push(entry);
    return () => {
      entry.cancelled = true;
    };
  }

  /** How many tasks wait to run. */
  get waiting(): number {
    return this.tasks.filter((t) => !t.cancelled).length;
  }

  async advance(ms: number): Promise<void> {
    const end = this.time + ms;
    for (;;) {
      this.tasks = this.tasks.filter((t) => !t.cancelled);
      const next = this.tasks.filter((t) => t.due <= end).sort((a, b) => a.due - b.due)[0];
      if (!next) break;
      this.tasks.splice(this.tasks.indexOf(next), 1);
      this.time = Math.max(this.time, next.due);
      await next.task();
    }
    this.time = end;
  }
}

export interface Message {
  pushType: string;
  pushCode?: string;
  report?: DeviceStatus;
}

export interface SimWorld {
  ctx: ContextWithSimulator;
  scheduler: ManualScheduler;
  serviceId: string;
  userNumber: string;
  /** Registers a virtual device of a catalog model and subscribes the service to its pushes and events. */
  add(deviceType: string, modelName?: string): Promise<string>;
  /** Simulated minutes at the context's time scale. */
  minutes(count: number): Promise<void>;
  /** Advances minute by minute until `done` holds; fails after `limit` minutes. Answers the minutes it took. */
  until(done: () => Promise<boolean>, limit: number): Promise<number>;
  status(deviceId: string): Promise<DeviceStatus>;
  /** The DEVICE_STATUS and DEVICE_PUSH messages recorded for the service about a device, oldest first. */
  messages(deviceId: string): Promise<Message[]>;
  pushCodes(deviceId: string): Promise<string[]>;
  control(deviceId: string, command: JsonObject): Promise<DeviceStatus>;
  close(): Promise<void>;
}

export async function simWorld(options: { timeScale?: number; start?: boolean } = {}): Promise<SimWorld> {
  const scheduler = new ManualScheduler();
  const config = loadConfig('test', { SIM_TIME_SCALE: String(options.timeScale ?? 1) });
  const { store, close } = await testStore();
  const ctx = createContext(config, store, scheduler, { scheduler });
  const { service } = await ctx.accounts.createService({ name: 'sim test', allowedDevices: [...DEVICE_TYPES] });
  const user = await ctx.accounts.createUser(demoCountry(config.region));
  await ctx.accounts.issueToken(user.userNumber, service.serviceId);
  if (options.start !== false) await ctx.simulator.start();
  const minuteMs = () => MINUTE / ctx.simulator.timeScale;

  const world: SimWorld = {
    ctx,
    scheduler,
    serviceId: service.serviceId,
    userNumber: user.userNumber,
    async add(deviceType, modelName) {
      const { device } = await ctx.devices.register(user.userNumber, { deviceType, alias: deviceType, virtual: true, ...(modelName ? { modelName } : {}) });
      const now = scheduler.now();
      await store.addPushSubscription(service.serviceId, user.userNumber, device.deviceId, now);
      await store.upsertEventSubscription({ serviceId: service.serviceId, userNumber: user.userNumber, deviceId: device.deviceId, expiresAt: now + 365 * 24 * 3600_000 }, now, 1000);
      return device.deviceId;
    },
    minutes: (count) => scheduler.advance(count * minuteMs()),
    async until(done, limit) {
      for (let minute = 0; minute <= limit; minute++) {
        if (await done()) return minute;
        await scheduler.advance(minuteMs());
      }
      throw new Error(`Not done within ${limit} simulated minutes`);
    },
    status: async (deviceId) => (await ctx.devices.state(deviceId)).status,
    async messages(deviceId) {
      const listed = await store.listMessages(service.serviceId, { deviceId, limit: 100_000 });
      return listed
        .filter((m) => m.pushType === 'DEVICE_STATUS' || m.pushType === 'DEVICE_PUSH')
        .sort((a, b) => a.sequence - b.sequence)
        .map((m) => {
          const body = JSON.parse(m.body) as { push?: Message; event?: Message };
          return (body.push ?? body.event) as Message;
        });
    },
    async pushCodes(deviceId) {
      return (await world.messages(deviceId)).filter((m) => m.pushType === 'DEVICE_PUSH').map((m) => m.pushCode as string);
    },
    async control(deviceId, command) {
      return (await ctx.devices.control(await ctx.devices.get(deviceId), command, false)).status;
    },
    async close() {
      await ctx.simulator.stop();
      await close();
    },
  };
  return world;
}

/** The location entry of a status (or the status itself when it has none). */
export function partOf(status: DeviceStatus, location?: string): JsonObject {
  if (!Array.isArray(status)) return status;
  const entry = location === undefined ? status[0] : status.find((e) => (e.location as JsonObject | undefined)?.locationName === location);
  return entry ?? {};
}

/** A value of a status by `resource.property` (in the first or the named location). */
export function read(status: DeviceStatus, path: string, location?: string): unknown {
  const [resource, property] = path.split('.') as [string, string];
  const body = partOf(status, location)[resource];
  return body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as JsonObject)[property] : undefined;
}
