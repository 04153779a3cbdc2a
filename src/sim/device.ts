/**
 * A virtual device's status as the engine works on it: a draft Part per location, edited by a
 * step, a command or an action, then put back into status shape with the change (only what
 * changed, as a DEVICE_STATUS carries it) and the push codes its profile lists.
 */
import { diffStatus, parsedProfile } from '../catalog/index.js';
import type { CatalogModel, DeviceStatus, JsonObject, ParsedProfile } from '../catalog/types.js';
import { cloneJson, isObject } from '../catalog/values.js';
import type { TypeBehaviour } from './behaviour.js';
import { advance } from './engine.js';
import { type Memory, Part } from './part.js';
import type { StepContext } from './programme.js';
import { behaviourOf } from './tables/index.js';

export interface Outcome {
  status: DeviceStatus;
  /** What changed, in status shape; null when nothing did. */
  report: DeviceStatus | null;
  pushes: string[];
  memory: Memory;
}

function locationOf(entry: JsonObject): unknown {
  return isObject(entry.location) ? entry.location.locationName : undefined;
}

export class DeviceDraft {
  readonly profile: ParsedProfile;
  readonly behaviour: TypeBehaviour;
  readonly memory: Memory;
  readonly parts: Part[];
  private readonly pushes: string[] = [];

  constructor(
    readonly model: CatalogModel,
    private readonly status: DeviceStatus,
    memory: Memory,
    private readonly simTime: number,
  ) {
    this.profile = parsedProfile(model);
    this.behaviour = behaviourOf(model.deviceType);
    this.memory = cloneJson(memory);
    this.parts = this.draftParts();
  }

  private draftParts(): Part[] {
    const { locations, root } = this.profile;
    if (!locations) return root && !Array.isArray(this.status) ? [new Part(root, cloneJson(this.status), this.memory)] : [];
    const entries = Array.isArray(this.status) ? this.status : [];
    return locations.map(({ name, set }) => {
      const { location: _location, ...values } = entries.find((e) => locationOf(e) === name) ?? {};
      return new Part(set, cloneJson(values), this.memory, name);
    });
  }

  /** The part of a location; without a name, the only (or first) one. */
  part(location?: string): Part | undefined {
    return location === undefined ? this.parts[0] : this.parts.find((p) => p.location === location);
  }

  /** A context for engine rows run on one part: pushes go to this draft's list. */
  context(): StepContext {
    return { simTime: this.simTime, pushes: this.pushes, finished: 0 };
  }

  finish(): Outcome {
    const status: DeviceStatus = this.profile.locations
      ? this.parts.map((p) => ({ location: { locationName: p.location }, ...p.values }))
      : (this.parts[0]?.values ?? {});
    const pushes = this.pushes.filter((code) => this.profile.pushCodes.includes(code));
    return { status, report: diffStatus(this.profile, this.status, status), pushes, memory: this.memory };
  }
}

/** `minutes` of simulated time on every location of a device. */
export function stepDevice(model: CatalogModel, status: DeviceStatus, memory: Memory, simTime: number, minutes = 1): Outcome {
  const draft = new DeviceDraft(model, status, memory, simTime);
  for (const part of draft.parts) advance(draft.behaviour, part, draft.context(), minutes);
  return draft.finish();
}
