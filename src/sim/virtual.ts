/**
 * A virtual appliance answering a control command as a real one would (DESIGN A.7.3): it checks the
 * same conditions whether or not the partner asked for them, then applies the whole command at once.
 * Pure. Write-only operation commands move the run state through OPERATION_EFFECTS; cycles that run
 * and finish over time come later and extend that table.
 */
import type { Refusal } from '../errors.js';
import { checkConditions, diffStatus, mergeStatus, parsedProfile, validateCommand } from '../catalog/index.js';
import type { CatalogModel, DeviceStatus, JsonObject, Resource, ResourceSet } from '../catalog/types.js';
import { isObject, valueProblem } from '../catalog/values.js';

/** What an operation command does: the run state it leads to (first one the profile has) and the timer. */
interface Effect {
  state: readonly string[];
  timer?: 'course' | 'clear';
}

const CYCLE: Readonly<Record<string, Effect>> = {
  START: { state: ['RUNNING'], timer: 'course' },
  STOP: { state: ['INITIAL', 'END'], timer: 'clear' },
  CANCEL: { state: ['INITIAL'], timer: 'clear' },
  POWER_OFF: { state: ['POWER_OFF'], timer: 'clear' },
  WAKE_UP: { state: ['INITIAL'] },
  POWER_ON: { state: ['INITIAL'] },
};

const ROBOT: Readonly<Record<string, Effect>> = {
  START: { state: ['WORKING'] },
  RESUME: { state: ['WORKING'] },
  PAUSE: { state: ['PAUSE'] },
  HOMING: { state: ['HOMING'] },
  WAKE_UP: { state: ['STANDBY', 'CHARGING'] },
};

const OVEN: Readonly<Record<string, Effect>> = {
  PREHEATING: { state: ['PREHEATING'] },
  START: { state: ['COOKING_IN_PROGRESS'] },
  STOP: { state: ['INITIAL'], timer: 'clear' },
};

/** Effects by write-only operation property; a property without a row (AC airCleanOperationMode) changes nothing readable. */
export const OPERATION_EFFECTS: Readonly<Record<string, Readonly<Record<string, Effect>>>> = {
  washerOperationMode: CYCLE,
  dryerOperationMode: CYCLE,
  stylerOperationMode: CYCLE,
  dishWasherOperationMode: CYCLE,
  cleanOperationMode: ROBOT,
  ovenOperationMode: OVEN,
};

/** The length of a started cycle, shown in its timer until time is simulated. */
const COURSE = { hour: 0, minute: 50 };

const TIMERS: Readonly<Record<NonNullable<Effect['timer']>, Readonly<Record<string, number>>>> = {
  course: { remainHour: COURSE.hour, remainMinute: COURSE.minute, totalHour: COURSE.hour, totalMinute: COURSE.minute },
  clear: { remainHour: 0, remainMinute: 0, remainSecond: 0 },
};

export type CommandOutcome = { ok: true; status: DeviceStatus; report: DeviceStatus | null } | { ok: false; refusal: Refusal };

/** Sets a readable property in a partial status when the profile allows the value; others are left alone. */
function put(change: JsonObject, set: ResourceSet, resource: string, name: string, value: unknown): boolean {
  const property = set.resources[resource]?.[name];
  if (!property?.readable || valueProblem(name, property, value, 'r') !== null) return false;
  change[resource] = { ...(isObject(change[resource]) ? change[resource] : {}), [name]: value };
  return true;
}

function applyEffect(change: JsonObject, set: ResourceSet, effect: Effect): void {
  for (const state of effect.state) if (put(change, set, 'runState', 'currentState', state)) break;
  for (const [name, value] of Object.entries(effect.timer ? TIMERS[effect.timer] : {})) put(change, set, 'timer', name, value);
}

/** The readable part of one resource body of a command; write-only operation values become effects. */
function readablePart(properties: Resource, body: JsonObject, keep: readonly string[], effects: Effect[]): JsonObject {
  const out: JsonObject = {};
  for (const [name, value] of Object.entries(body)) {
    if (keep.includes(name) || properties[name]?.readable) out[name] = value;
    else if (typeof value === 'string') {
      const effect = OPERATION_EFFECTS[name]?.[value];
      if (effect) effects.push(effect);
    }
  }
  return out;
}

/** The status change a valid command causes in one resource set. */
function changeOf(set: ResourceSet, command: JsonObject): JsonObject {
  const change: JsonObject = {};
  const effects: Effect[] = [];
  for (const [resource, body] of Object.entries(command)) {
    if (!isObject(body)) continue;
    const entry = set.arrays[resource]?.find((e) => body[e.key] === e.name);
    const part = entry
      ? readablePart(entry.properties, body, [entry.key], effects)
      : readablePart(set.resources[resource] ?? {}, body, [], effects);
    const setsSomething = Object.keys(part).some((k) => k !== entry?.key);
    if (setsSomething) change[resource] = entry ? [part] : part;
  }
  for (const effect of effects) applyEffect(change, set, effect);
  return change;
}

/** Applies a command to a virtual appliance: refused like a real device would, or its new status and the change. */
export function applyCommand(model: CatalogModel, status: DeviceStatus, command: JsonObject): CommandOutcome {
  const profile = parsedProfile(model);
  const valid = validateCommand(profile, command);
  if (!valid.ok) return valid;
  const refusal = checkConditions(model.deviceType, profile, status, valid.value);
  if (refusal) return { ok: false, refusal };
  const { location, ...resources } = valid.value;
  let change: DeviceStatus;
  if (profile.locations) {
    const name = isObject(location) ? location.locationName : undefined;
    const set = profile.locations.find((l) => l.name === name)?.set as ResourceSet;
    change = [{ location: { locationName: name }, ...changeOf(set, resources) }];
  } else {
    change = changeOf(profile.root as ResourceSet, valid.value);
  }
  const next = mergeStatus(profile, status, change);
  return { ok: true, status: next, report: diffStatus(profile, status, next) };
}
