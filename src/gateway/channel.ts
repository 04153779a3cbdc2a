/**
 * The command channel of real devices (DESIGN A.7.3, B): a command goes out on
 * `appliance/{id}/command` and the device's answer comes back on `…/command/result`, which the bridge
 * hands to `settle`. Offline devices never get here: Devices answers 1222 before sending; one that goes
 * offline while its command waits is answered 1222 then (`offline`).
 */
import { getModel, mergeStatus, parsedProfile, validateReport } from '../catalog/index.js';
import type { DeviceStatus, JsonObject } from '../catalog/types.js';
import type { CommandOutcome, DeviceChannel } from '../core/channel.js';
import { encodeCommand, type CommandResult } from '../device-protocol/codec.js';
import { topicOf } from '../device-protocol/topics.js';
import type { ErrorCode } from '../errors.js';
import { randomId } from '../ids.js';
import type { Device } from '../core/model.js';

/**
 * Publishes at QoS 0, which no broker keeps for a session without a connection: a command is for
 * the device connected now. Kept at QoS 1, it reached a device that came back after its control had
 * failed (answered 2209 or 1222), which then ran it.
 */
export type PublishCommand = (topic: string, payload: string) => Promise<void>;

/** The refusals a device may give (A.7: its run state decides); any other code becomes 2208. */
const DEVICE_REFUSALS = ['2208', '2301', '2302', '2303', '2304', '2305'] as const satisfies readonly ErrorCode[];
type DeviceRefusal = (typeof DEVICE_REFUSALS)[number];

function isDeviceRefusal(code: string): code is DeviceRefusal {
  return (DEVICE_REFUSALS as readonly string[]).includes(code);
}

interface Pending {
  device: Device;
  status: DeviceStatus;
  resolve(outcome: CommandOutcome): void;
  timer: NodeJS.Timeout;
}

export class MqttCommandChannel implements DeviceChannel {
  private readonly pending = new Map<string, Pending>();
  private closed = false;

  constructor(private readonly publish: PublishCommand) {}

  async sendCommand(device: Device, status: DeviceStatus, command: JsonObject, timeoutMs: number): Promise<CommandOutcome> {
    if (this.closed) return timedOut(device, 'the device gateway is shut down');
    const commandId = randomId();
    const answered = new Promise<CommandOutcome>((resolve) => {
      const timer = setTimeout(() => this.finish(commandId, timedOut(device, `it did not answer within ${timeoutMs} ms`)), timeoutMs);
      this.pending.set(commandId, { device, status, resolve, timer });
    });
    // Registered before publishing, so that an answer faster than the PUBACK still finds its command.
    this.publish(topicOf(device.deviceId, 'command'), encodeCommand({ commandId, command })).catch((error: unknown) => {
      this.finish(commandId, timedOut(device, `the broker did not take the command (${error instanceof Error ? error.message : String(error)})`));
    });
    return answered;
  }

  /**
   * A device's answer. false when no command of this node waits for it: with several nodes every
   * node sees every result and only the one that sent the command knows its id.
   */
  settle(deviceId: string, result: CommandResult): boolean {
    const waiting = this.pending.get(result.commandId);
    // A device cannot answer another's command (the broker also keeps it to its own topics).
    if (!waiting || waiting.device.deviceId !== deviceId) return false;
    this.finish(result.commandId, outcomeOf(waiting, result));
    return true;
  }

  /** An answer that does not fit the contract: the command fails at once with 2208, not at its timeout. */
  unfit(deviceId: string, commandId: string, problem: string): boolean {
    const waiting = this.pending.get(commandId);
    if (!waiting || waiting.device.deviceId !== deviceId) return false;
    this.finish(commandId, { ok: false, code: '2208', message: `Device ${deviceId} answered the command with a result that does not fit the device contract: ${problem}.` });
    return true;
  }

  /**
   * The device's connection ended: its commands waiting here fail at once with 1222 (DESIGN A.7: offline),
   * not with 2209 at their timeout. Whether it applied one before it went is unknown, as at a timeout.
   */
  offline(deviceId: string): void {
    for (const [commandId, { device }] of this.pending) {
      if (device.deviceId !== deviceId) continue;
      this.finish(commandId, { ok: false, code: '1222', message: `Device ${deviceId} went offline before it answered the command.` });
    }
  }

  /** Answers every waiting command with 2209 and refuses new ones; for shutdown. */
  close(): void {
    this.closed = true;
    for (const [commandId, { device }] of this.pending) this.finish(commandId, timedOut(device, 'the device gateway shut down'));
  }

  private finish(commandId: string, outcome: CommandOutcome): void {
    const waiting = this.pending.get(commandId);
    if (!waiting) return;
    this.pending.delete(commandId);
    clearTimeout(waiting.timer);
    waiting.resolve(outcome);
  }
}

function timedOut(device: Device, why: string): CommandOutcome {
  return { ok: false, code: '2209', message: `Device ${device.deviceId} did not answer the command: ${why}.` };
}

/**
 * A result as the outcome Devices persists. The status a device answers with is a report like any
 * other: it must fit the profile, and it is merged into the status the command was sent against.
 */
function outcomeOf({ device, status }: Pending, result: CommandResult): CommandOutcome {
  const { deviceId } = device;
  if (!result.ok) {
    const said = result.message ?? 'no reason given';
    if (result.code === null) return { ok: false, code: '2208', message: `Device ${deviceId} refused the command: ${said}.` };
    if (isDeviceRefusal(result.code)) return { ok: false, code: result.code, message: result.message ?? `Device ${deviceId} refused the command.` };
    return { ok: false, code: '2208', message: `Device ${deviceId} refused the command with code ${result.code}: ${said}.` };
  }
  const model = getModel(device.deviceType, device.modelName);
  if (!model) return { ok: false, code: '2208', message: `Device ${deviceId} has no catalog model ${device.modelName}.` };
  const profile = parsedProfile(model);
  const valid = validateReport(profile, result.status);
  if (!valid.ok) return { ok: false, code: '2208', message: `Device ${deviceId} answered with a status that does not fit its profile: ${valid.refusal.message}` };
  return { ok: true, status: mergeStatus(profile, status, valid.value), answered: valid.value };
}
