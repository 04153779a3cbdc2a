/**
 * Sandbox controls (DESIGN D `POST /admin/devices/{deviceId}/sim`): what a person at the appliance
 * or in the room would do — press start, open a door, fit a filter — and what the sandbox adds to
 * make rare things happen now (raise an error, wear a part out). Each applies through the engine
 * and comes back as a status change and pushes, like any minute of simulation.
 */
import type { CatalogModel, DeviceStatus } from '../catalog/types.js';
import { isObject } from '../catalog/values.js';
import type { ActionRow, TypeBehaviour, Wear } from './behaviour.js';
import { DeviceDraft, type Outcome } from './device.js';
import { renew, settle, wearOut } from './engine.js';
import { emptyMemory, type Memory, type Part } from './part.js';
import { clearError, isRunning, perform, raiseError, RUN_STATE } from './programme.js';
import { COMMON_ACTIONS } from './tables/index.js';

/** Controls of the connection rather than the status: the simulator performs them itself. */
export const CONNECTION_ACTIONS = {
  'go-offline': 'Lose the connection (the device stops reporting and refuses control with 1222)',
  'go-online': 'Connect again',
} as const;

const PROGRAMME_ACTIONS = {
  start: 'Press start at the appliance (even with Remote Start off); args: location, minutes',
  pause: 'Press pause at the appliance; args: location',
  stop: 'Press stop at the appliance; args: location',
  'raise-error': "Put the appliance in its error state, showing an error code, and raise its failure push; args: pushCode (one of the type's failure pushes), error (one of the profile's error codes; the first by default), location",
  'clear-error': 'Clear the error: a programme with time left waits paused, else the appliance rests idle; args: location',
} as const;

const WEAR_OUT = "Wear parts out to a minute's use (or one programme) before their limit; args: counter";

/** Arguments of an action, parsed from the request body once. */
export interface ActionArgs {
  location?: string;
  minutes?: number;
  pushCode?: string;
  error?: string;
  counter?: string;
  inMinutes?: number;
}

export class ActionRefused extends Error {}

function positiveInteger(args: Record<string, unknown>, name: string): number | undefined {
  const value = args[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw new ActionRefused(`args.${name} must be a whole number of minutes ≥ 1; got ${JSON.stringify(value)}`);
  return value;
}

function text(args: Record<string, unknown>, name: string): string | undefined {
  const value = args[name];
  if (value !== undefined && typeof value !== 'string') throw new ActionRefused(`args.${name} must be a string; got ${JSON.stringify(value)}`);
  return value;
}

/** Parses `args` of an action request; a malformed one is refused naming the argument. */
export function parseArgs(args: unknown): ActionArgs {
  if (args === undefined) return {};
  if (!isObject(args)) throw new ActionRefused(`args must be an object; got ${JSON.stringify(args)}`);
  const parsed: ActionArgs = {};
  for (const name of ['location', 'pushCode', 'error', 'counter'] as const) {
    const value = text(args, name);
    if (value !== undefined) parsed[name] = value;
  }
  for (const name of ['minutes', 'inMinutes'] as const) {
    const value = positiveInteger(args, name);
    if (value !== undefined) parsed[name] = value;
  }
  return parsed;
}

/** Wear rows the device's profile shows or notifies about (a filter nobody can see is not offered). */
function visibleWear(behaviour: TypeBehaviour, part: Part, pushCodes: readonly string[]): Wear[] {
  return (behaviour.wear ?? []).filter((wear) => (wear.push !== undefined && pushCodes.includes(wear.push)) || (wear.shows ?? []).some(({ path }) => part.has(path)));
}

/** An action is offered where its profile can show what it writes, or where it renews a part the device has. */
function rowApplies(row: ActionRow, part: Part, wears: readonly Wear[]): boolean {
  const writes = Object.entries(row.set).some(([path, value]) => !path.startsWith('$') && (typeof value === 'object' ? part.has(path) : part.canShow(path, value)));
  const renews = (row.resets ?? []).some((id) => wears.some((wear) => wear.id === id));
  const conditionPaths = Object.keys(row.when ?? {}).every((path) => part.has(path));
  return (writes || renews) && conditionPaths;
}

function rows(behaviour: TypeBehaviour): Record<string, ActionRow> {
  return { ...COMMON_ACTIONS, ...behaviour.actions };
}

/** The actions a device offers, by name with what each does; they depend on its profile. */
export function actionsFor(model: CatalogModel): Record<string, string> {
  const draft = new DeviceDraft(model, model.defaultStatus, emptyMemory(), 0);
  const offered: Record<string, string> = {};
  const { programme } = draft.behaviour;
  for (const part of draft.parts) {
    if (programme && part.has(RUN_STATE)) {
      const errors = part.canShow(RUN_STATE, 'ERROR');
      for (const [name, summary] of Object.entries(PROGRAMME_ACTIONS)) if (errors || !name.includes('error')) offered[name] = summary;
    }
    const wears = visibleWear(draft.behaviour, part, draft.profile.pushCodes);
    if (wears.length) offered['wear-out'] = WEAR_OUT;
    for (const [name, row] of Object.entries(rows(draft.behaviour))) if (rowApplies(row, part, wears)) offered[name] = row.summary;
  }
  return { ...offered, ...CONNECTION_ACTIONS };
}

function pickPart(draft: DeviceDraft, location: string | undefined): Part {
  const part = draft.part(location);
  if (!part) {
    const locations = draft.parts.flatMap((p) => (p.location === undefined ? [] : [p.location]));
    throw new ActionRefused(locations.length ? `args.location must be one of ${locations.join(', ')}; got ${JSON.stringify(location)}` : `args.location is not taken: this device has no locations; got ${JSON.stringify(location)}`);
  }
  return part;
}

function refuseUnless(action: string, reason: string | null): void {
  if (reason !== null) throw new ActionRefused(`${action} is not possible now: ${reason}`);
}

function programmeAction(draft: DeviceDraft, part: Part, action: string, args: ActionArgs): void {
  const programme = draft.behaviour.programme;
  if (!programme) throw new ActionRefused(`${action} does not apply to a ${draft.model.deviceType}`);
  const context = draft.context();
  if (action === 'start') {
    refuseUnless(action, part.mismatch({ [RUN_STATE]: programme.startableIn }));
    perform(programme, part, 'start', args.minutes);
  } else if (action === 'pause' || action === 'stop') {
    const active = isRunning(programme, part) || (action === 'stop' && [programme.paused, programme.reserved].includes(String(part.read(RUN_STATE))));
    refuseUnless(action, active ? null : `nothing is running (${RUN_STATE} is ${JSON.stringify(part.read(RUN_STATE))})`);
    perform(programme, part, action);
  } else if (action === 'raise-error') {
    const failures = programme.failures.filter((code) => draft.profile.pushCodes.includes(code));
    if (args.pushCode !== undefined && !failures.includes(args.pushCode)) {
      throw new ActionRefused(`args.pushCode must be one of ${failures.join(', ') || 'none (this model raises no failure push)'}; got ${JSON.stringify(args.pushCode)}`);
    }
    const codes = draft.profile.errors;
    if (args.error !== undefined && !codes.includes(args.error)) {
      throw new ActionRefused(`args.error must be one of ${codes.join(', ') || "none (this model's profile lists no error codes)"}; got ${JSON.stringify(args.error)}`);
    }
    refuseUnless(action, raiseError(part, context, args.pushCode ?? failures[0], args.error ?? codes[0]));
  } else refuseUnless(action, clearError(programme, part));
}

function rowAction(draft: DeviceDraft, part: Part, action: string, row: ActionRow, args: ActionArgs, simTime: number): void {
  refuseUnless(action, part.mismatch(row.when));
  part.writeAll(row.set);
  if (row.schedule) {
    const at = new Date(simTime + (args.inMinutes ?? 10) * 60_000);
    part.write(row.schedule.hour, at.getUTCHours());
    part.write(row.schedule.minute, at.getUTCMinutes());
  }
  if (row.resets) renew(draft.behaviour.wear ?? [], part, row.resets);
}

/**
 * Applies an action other than the connection ones to a device's status. Throws ActionRefused,
 * naming the reason, when the device does not offer it or cannot do it now.
 */
export function applyAction(model: CatalogModel, status: DeviceStatus, memory: Memory, simTime: number, action: string, args: ActionArgs): Outcome {
  const offered = actionsFor(model);
  if (!Object.hasOwn(offered, action) || Object.hasOwn(CONNECTION_ACTIONS, action)) {
    throw new ActionRefused(`action must be one of ${Object.keys(offered).join(', ')}; got ${JSON.stringify(action)}`);
  }
  const draft = new DeviceDraft(model, status, memory, simTime);
  const part = pickPart(draft, args.location);
  const row = rows(draft.behaviour)[action];
  if (Object.hasOwn(PROGRAMME_ACTIONS, action)) programmeAction(draft, part, action, args);
  else if (action === 'wear-out') {
    if (wearOut(visibleWear(draft.behaviour, part, draft.profile.pushCodes), part, args.counter) === 0) {
      const counters = visibleWear(draft.behaviour, part, draft.profile.pushCodes).map((wear) => wear.id);
      throw new ActionRefused(`args.counter must be one of ${counters.join(', ')}; got ${JSON.stringify(args.counter)}`);
    }
  } else if (row) rowAction(draft, part, action, row, args, simTime);
  settle(draft.behaviour, part, draft.context());
  return draft.finish();
}
