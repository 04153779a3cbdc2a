/**
 * The simulator (STYLE habit 7): a loop with explicit states that, every simulated minute, steps
 * each virtual device in the store through the engine and hands what changed to Devices, exactly
 * the path a real device's report takes (DEVICE_STATUS with only the changed part, DEVICE_PUSH per
 * notification). It is also the command channel of virtual devices, and runs sandbox actions and
 * scenarios. Its I/O (devices, store listings, clock, scheduler) is passed in.
 *
 * Every node of a deployment runs one. With `sharing`, only the node holding the turn (a store lease)
 * steps the appliances, or each would live its minutes once per node, and the time scale is the
 * deployment's, whichever node was told it. Commands, actions and scenarios run on the node that
 * takes them; what an appliance remembers beyond its status (Memory) is that node's.
 */
import { commandFor, getModel, listReadable, mergeStatus, parsedProfile, valueAt } from '../catalog/index.js';
import { show } from '../catalog/values.js';
import type { CatalogModel, DeviceStatus, JsonObject } from '../catalog/types.js';
import type { CommandOutcome, DeviceChannel } from '../core/channel.js';
import type { Devices } from '../core/devices.js';
import { DeviceNotRegistered } from '../core/errors.js';
import { KeyedLock } from '../core/lock.js';
import { fail } from '../errors.js';
import type { Clock } from '../ids.js';
import type { Device, DeviceState } from '../core/model.js';
import { ActionRefused, applyAction, CONNECTION_ACTIONS, parseArgs } from './actions.js';
import { type Outcome, stepDevice } from './device.js';
import { emptyMemory, type Memory } from './part.js';
import { SCENARIOS, type ScenarioStep } from './scenarios.js';
import type { Scheduler } from './scheduler.js';
import { isTimeScale, TIME_SCALE_RANGE } from './time-scale.js';
import { applyCommand } from './virtual.js';

const MINUTE = 60_000;
/** How long the turn to step the appliances is held unrenewed: after a crash, the appliances stand still this long at most. */
export const TURN_MS = 6000;
/** How often a node renews its turn, or tries to take it, and reads the deployment's time scale. */
const TURN_CHECK_MS = TURN_MS / 3;

export interface SimulatorDeps {
  devices: Pick<Devices, 'get' | 'state' | 'report' | 'push' | 'setConnection'>;
  /** Every virtual device in the store: each minute the simulator adopts new ones and drops deleted ones. */
  listVirtualDevices(): Promise<Device[]>;
  /** A user's devices, for scenarios. */
  listUserDevices(userNumber: string): Promise<Device[]>;
  clock: Clock;
  scheduler: Scheduler;
  /** 1 = real time; 10 = ten simulated minutes per real minute. */
  timeScale: number;
  /**
   * Sharing, whether `timeScale` was asked for (SIM_TIME_SCALE) and so becomes the deployment's at
   * start; a default gives way to the scale the deployment has.
   */
  timeScaleSet?: boolean;
  /** Told about a step that failed (`*` for the roster or the turn); the loop carries on with the next device. */
  onError: (error: unknown, deviceId: string) => void;
  /** With several nodes on one database; without (the MQTT fleet of `sim devices`), this simulator is the only one. */
  sharing?: SimulatorSharing;
}

/** What the nodes of a deployment share to simulate its appliances once: see the module's comment. */
export interface SimulatorSharing {
  /** Takes or renews this node's turn to step the appliances for TURN_MS; true while it holds it. */
  holdTurn(ttlMs: number): Promise<boolean>;
  giveTurnUp(): Promise<void>;
  /** The deployment's time scale, null until a node set it. */
  readScale(): Promise<number | null>;
  writeScale(scale: number): Promise<void>;
}

/** One virtual device as the simulator keeps it between minutes. */
interface Appliance {
  deviceId: string;
  /** The registration simulated (its secret hash): what it reports and pushes is stored for that one only. */
  secretHash: string;
  model: CatalogModel;
  memory: Memory;
  /** Bumped by each command: work that read the status before a command must not write over it. */
  generation: number;
  /** Whether a report of the simulator's is on its way to the store. */
  reporting: boolean;
  /** What each command changed while it was, to repair that report if it landed after them. */
  commands: DeviceStatus[];
}

/** A scenario waiting for its previous device to reach a state. */
interface PendingScenario {
  previous: string;
  steps: { step: ScenarioStep; deviceId: string }[];
}

type LoopState = 'stopped' | 'running' | 'stopping';

function runStateOf(status: DeviceStatus): unknown {
  const part = Array.isArray(status) ? status[0] : status;
  const runState = part?.runState;
  return runState !== null && typeof runState === 'object' && !Array.isArray(runState) ? (runState as JsonObject).currentState : undefined;
}

export class Simulator implements DeviceChannel {
  private loop: LoopState = 'stopped';
  private scale: number;
  private simTime: number;
  private readonly appliances = new Map<string, Appliance>();
  /** Serialises the simulator's own work on a device (steps, actions); commands never wait on it. */
  private readonly lock = new KeyedLock();
  private cancelTick: (() => void) | null = null;
  private round: Promise<void> | null = null;
  private readonly inFlight = new Set<Promise<unknown>>();
  private pending: PendingScenario[] = [];
  /** Whether this node steps the appliances: always when alone, while it holds the turn when sharing. */
  private stepping: boolean;
  private turnTimer: NodeJS.Timeout | null = null;
  private turnCheck: Promise<void> | null = null;

  constructor(private readonly deps: SimulatorDeps) {
    this.scale = checkedScale(deps.timeScale);
    this.simTime = deps.clock.now();
    this.stepping = deps.sharing === undefined;
  }

  get state(): LoopState {
    return this.loop;
  }

  get timeScale(): number {
    return this.scale;
  }

  /** The deployment's time scale, which every node applies within a turn check: this node's when it is alone. */
  async deploymentTimeScale(): Promise<number> {
    const shared = await this.deps.sharing?.readScale();
    return shared !== undefined && shared !== null && isTimeScale(shared) ? shared : this.scale;
  }

  /** Whether this node steps the appliances now (see the module's comment). */
  get stepsHere(): boolean {
    return this.stepping;
  }

  /**
   * A scale as given (a number, or the text a form sent that is none), refused with 1102 unless it is
   * one. It applies here at once (the next minute comes one new period from now), and on the
   * deployment's other nodes at their next turn check.
   */
  async setTimeScale(scale: unknown): Promise<void> {
    const checked = checkedScale(scale);
    await this.deps.sharing?.writeScale(checked);
    this.applyScale(checked);
  }

  /**
   * Adopts every virtual device in the store (a running programme resumes from its status) and starts
   * the clock. Sharing, a time scale it was given becomes the deployment's, as SIM_TIME_SCALE sets it
   * at each start; without one it takes the deployment's (its turn check).
   */
  async start(): Promise<void> {
    if (this.loop !== 'stopped') return;
    this.loop = 'running';
    try {
      if (this.deps.timeScaleSet !== false) await this.deps.sharing?.writeScale(this.scale);
      await this.checkTurn();
      if (this.stepping) await this.refreshRoster();
    } catch (error) {
      this.loop = 'stopped';
      throw error;
    }
    // stop() may have been called while the roster loaded.
    if (this.loop !== 'running') return;
    this.schedule();
    if (this.deps.sharing) {
      // Real time, whatever the scheduler: the lease runs out by the database's clock.
      this.turnTimer = setInterval(() => {
        this.turnCheck ??= this.checkTurn().finally(() => {
          this.turnCheck = null;
        });
      }, TURN_CHECK_MS);
      this.turnTimer.unref();
    }
  }

  /** Cancels the next minute and waits for the current one and any action in flight to finish reporting; gives the turn up. */
  async stop(): Promise<void> {
    if (this.loop === 'running') this.loop = 'stopping';
    this.cancelTick?.();
    this.cancelTick = null;
    if (this.turnTimer) clearInterval(this.turnTimer);
    this.turnTimer = null;
    await this.turnCheck;
    await this.round;
    await Promise.allSettled([...this.inFlight]);
    this.pending = [];
    if (this.deps.sharing && this.stepping) {
      this.stepping = false;
      // Another node takes the turn at its next check rather than once the lease runs out.
      await this.deps.sharing.giveTurnUp().catch((error: unknown) => this.deps.onError(error, '*'));
    }
    this.loop = 'stopped';
  }

  /**
   * Holds the turn (or learns another node does) and takes the deployment's time scale. A check that
   * fails leaves this node unsure it still holds the turn, so it stops stepping until one succeeds.
   */
  async checkTurn(): Promise<void> {
    const sharing = this.deps.sharing;
    if (!sharing) return;
    try {
      this.stepping = await sharing.holdTurn(TURN_MS);
      const scale = await sharing.readScale();
      if (scale !== null && isTimeScale(scale) && scale !== this.scale) this.applyScale(scale);
    } catch (error) {
      this.stepping = false;
      this.deps.onError(error, '*');
    }
  }

  private applyScale(scale: number): void {
    this.scale = scale;
    if (this.loop === 'running' && this.cancelTick) {
      this.cancelTick();
      this.schedule();
    }
  }

  /** DeviceChannel: a virtual device answers a command at once, refusing it as a real one would. */
  async sendCommand(device: Device, status: DeviceStatus, command: JsonObject): Promise<CommandOutcome> {
    const appliance = this.adopt(device);
    if (!appliance) return { ok: false, code: '2208', message: `Device ${device.deviceId} has no model ${device.modelName} in the catalog.` };
    const outcome = applyCommand(appliance.model, status, command, appliance.memory, this.simTime);
    if (!outcome.ok) return { ok: false, code: outcome.refusal.code, message: outcome.refusal.message };
    appliance.generation += 1;
    appliance.memory = outcome.memory;
    if (appliance.reporting && outcome.report) appliance.commands.push(outcome.report);
    // A virtual device's answer is its change to the status it was sent: that change is what applies again over a newer one.
    return { ok: true, status: outcome.status, answered: outcome.report, report: outcome.report };
  }

  /** A sandbox action on a virtual device; resolves with its state afterwards. */
  async act(deviceId: string, action: string, rawArgs?: unknown): Promise<DeviceState> {
    const device = await this.deps.devices.get(deviceId);
    if (!device.virtual) throw fail('1102', `Device ${deviceId} is a real device: sim actions only apply to virtual appliances.`);
    const appliance = this.adopt(device);
    if (!appliance) throw fail('1102', `Device ${deviceId} has no model ${device.modelName} in the catalog.`);
    if (Object.hasOwn(CONNECTION_ACTIONS, action)) {
      await this.deps.devices.setConnection(deviceId, action === 'go-online', appliance.secretHash);
      return this.deps.devices.state(deviceId);
    }
    const args = refusedAs1102(() => parseArgs(rawArgs));
    return this.track(this.lock.run(deviceId, () => this.perform(appliance, action, args)));
  }

  /** Starts a named scenario for a user; resolves with the devices it involves, in the order they act. */
  async runScenario(name: string, userNumber: string): Promise<string[]> {
    const scenario = Object.hasOwn(SCENARIOS, name) ? SCENARIOS[name] : undefined;
    if (!scenario) throw fail('1102', `scenario must be one of ${Object.keys(SCENARIOS).join(', ')}; got ${JSON.stringify(name)}`);
    const devices = (await this.deps.listUserDevices(userNumber)).filter((d) => d.virtual);
    const steps = scenario.steps.map((step) => {
      const device = devices.find((d) => step.deviceTypes.includes(d.deviceType));
      if (!device) throw fail('1102', `Scenario ${name} needs a virtual ${step.deviceTypes.join(' or ')} registered to user ${userNumber}.`);
      return { step, deviceId: device.deviceId };
    });
    await this.continueScenario({ previous: steps[0]?.deviceId as string, steps: [...steps] });
    return [...new Set(steps.map((s) => s.deviceId))];
  }

  private schedule(): void {
    this.cancelTick = this.deps.scheduler.after(MINUTE / this.scale, () => this.tick());
  }

  private async tick(): Promise<void> {
    if (this.loop !== 'running') return;
    this.cancelTick = null;
    this.round = this.runRound();
    await this.round;
    this.round = null;
    if (this.loop === 'running') this.schedule();
  }

  private async runRound(): Promise<void> {
    this.simTime += MINUTE;
    if (this.stepping) await this.stepAll();
    // A scenario waits on the node that started it, whichever node steps its appliances.
    await this.advanceScenarios();
  }

  private async stepAll(): Promise<void> {
    try {
      await this.refreshRoster();
    } catch (error) {
      this.deps.onError(error, '*');
    }
    for (const appliance of [...this.appliances.values()]) {
      await this.lock.run(appliance.deviceId, () => this.step(appliance)).catch((error: unknown) => this.failed(appliance.deviceId, error));
    }
  }

  private async refreshRoster(): Promise<void> {
    const devices = await this.deps.listVirtualDevices();
    const present = new Set(devices.map((d) => d.deviceId));
    for (const deviceId of this.appliances.keys()) if (!present.has(deviceId)) this.appliances.delete(deviceId);
    for (const device of devices) this.adopt(device);
  }

  /** The appliance simulating the device's registration: one of an earlier registration of its id is replaced. */
  private adopt(device: Device): Appliance | undefined {
    const known = this.appliances.get(device.deviceId);
    if (known?.secretHash === device.secretHash) return known;
    const model = getModel(device.deviceType, device.modelName);
    if (!model) return undefined;
    const { deviceId, secretHash } = device;
    const appliance: Appliance = { deviceId, secretHash, model, memory: emptyMemory(), generation: 0, reporting: false, commands: [] };
    this.appliances.set(device.deviceId, appliance);
    return appliance;
  }

  private failed(deviceId: string, error: unknown): void {
    // A device unregistered mid-minute is simply gone; anything else is worth telling.
    if (error instanceof DeviceNotRegistered) this.appliances.delete(deviceId);
    else this.deps.onError(error, deviceId);
  }

  /** One simulated minute of one device; an offline device's time stands still. */
  private async step(appliance: Appliance): Promise<void> {
    const state = await this.deps.devices.state(appliance.deviceId);
    if (!state.online) return;
    const generation = appliance.generation;
    const outcome = stepDevice(appliance.model, state.status, appliance.memory, this.simTime);
    // A command arrived while the status was read: the next minute starts from its result.
    if (appliance.generation !== generation) return;
    appliance.memory = outcome.memory;
    await this.publish(appliance, outcome, generation);
  }

  private async perform(appliance: Appliance, action: string, args: ReturnType<typeof parseArgs>): Promise<DeviceState> {
    for (;;) {
      const state = await this.deps.devices.state(appliance.deviceId);
      if (!state.online) throw fail('1222', `Device ${appliance.deviceId} is not connected: act go-online first.`);
      const generation = appliance.generation;
      const outcome = refusedAs1102(() => applyAction(appliance.model, state.status, appliance.memory, this.simTime, action, args));
      if (appliance.generation !== generation) continue;
      appliance.memory = outcome.memory;
      return (await this.publish(appliance, outcome, generation)) ?? state;
    }
  }

  /** Reports the change and raises the pushes, through Devices like any device. */
  private async publish(appliance: Appliance, outcome: Outcome, generation: number): Promise<DeviceState | undefined> {
    let state: DeviceState | undefined;
    if (outcome.report) {
      appliance.reporting = true;
      try {
        state = await this.deps.devices.report(appliance.deviceId, outcome.report, appliance.secretHash);
        if (appliance.generation !== generation) state = (await this.repair(appliance, outcome.report)) ?? state;
      } finally {
        appliance.reporting = false;
        appliance.commands = [];
      }
    }
    for (const pushCode of outcome.pushes) await this.deps.devices.push(appliance.deviceId, pushCode, appliance.secretHash);
    return state;
  }

  /**
   * A command was applied while our report waited to be stored, so the report (computed before it)
   * may have overwritten what the command set. Reports the command's values again for exactly
   * those properties: the device did the step first and the command after.
   */
  private async repair(appliance: Appliance, report: DeviceStatus): Promise<DeviceState | undefined> {
    const profile = parsedProfile(appliance.model);
    let correction: DeviceStatus = profile.locations ? [] : {};
    let needed = false;
    for (const item of listReadable(profile)) {
      if (valueAt(report, item) === undefined) continue;
      const last = appliance.commands.map((change) => valueAt(change, item)).filter((v) => v !== undefined).at(-1);
      if (last === undefined) continue;
      correction = mergeStatus(profile, correction, commandFor(item, last));
      needed = true;
    }
    return needed ? this.deps.devices.report(appliance.deviceId, correction, appliance.secretHash) : undefined;
  }

  private async continueScenario(scenario: PendingScenario): Promise<void> {
    while (scenario.steps.length) {
      const next = scenario.steps[0] as { step: ScenarioStep; deviceId: string };
      if (next.step.after) {
        const status = (await this.deps.devices.state(scenario.previous)).status;
        if (!next.step.after.includes(String(runStateOf(status)))) {
          this.pending.push(scenario);
          return;
        }
      }
      scenario.steps.shift();
      await this.act(next.deviceId, next.step.action, next.step.args);
      scenario.previous = next.deviceId;
    }
  }

  private async advanceScenarios(): Promise<void> {
    const waiting = this.pending;
    this.pending = [];
    for (const scenario of waiting) {
      await this.continueScenario(scenario).catch((error: unknown) => this.deps.onError(error, scenario.previous));
    }
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work)).catch(() => undefined);
    return work;
  }
}

function checkedScale(scale: unknown): number {
  if (!isTimeScale(scale)) throw fail('1102', `scale must be ${TIME_SCALE_RANGE}; got ${show(scale)}`);
  return scale;
}

function refusedAs1102<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof ActionRefused) throw fail('1102', error.message);
    throw error;
  }
}
