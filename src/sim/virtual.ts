/**
 * A virtual appliance answering a control command as a real one would (DESIGN A.7.3): it checks the
 * same conditions whether or not the partner asked for them, then applies the whole command at once.
 * Readable properties take the commanded values; a write-only operation value performs its
 * programme verb (a cycle starts, a robot heads home); a write-only target sets the readable one it
 * stands for; any other write-only value is remembered for the rows that read it. Nothing is ignored.
 */
import { checkConditions, parsedProfile, validateCommand } from '../catalog/index.js';
import type { CatalogModel, DeviceStatus, JsonObject } from '../catalog/types.js';
import { cloneJson, isObject, own } from '../catalog/values.js';
import type { Refusal } from '../errors.js';
import type { TypeBehaviour, Verb } from './behaviour.js';
import { DeviceDraft } from './device.js';
import { settleCommand } from './engine.js';
import { emptyMemory, type Memory, Part } from './part.js';
import { armDelay, perform } from './programme.js';

export type CommandOutcome =
  | { ok: true; status: DeviceStatus; report: DeviceStatus | null; memory: Memory }
  | { ok: false; refusal: Refusal };

/** Writes one resource body of a validated command into the part; answers the programme verbs it asks for. */
function applyResource(behaviour: TypeBehaviour, part: Part, resource: string, body: JsonObject): Verb[] {
  const entries = part.set.arrays[resource];
  const key = entries?.[0]?.key;
  const entryName = key === undefined ? undefined : body[key];
  const properties = entries ? entries.find((e) => e.name === entryName)?.properties : part.set.resources[resource];
  const prefix = entryName === undefined ? resource : `${resource}[${String(entryName)}]`;
  const verbs: Verb[] = [];
  for (const [name, value] of Object.entries(body)) {
    if (name === key) continue;
    const programme = behaviour.programme;
    const verb = programme?.operation === name ? own(programme.commands, String(value)) : undefined;
    const alias = behaviour.aliases && own(behaviour.aliases, name);
    if (verb) verbs.push(verb);
    else if (properties?.[name]?.readable && part.write(`${prefix}.${name}`, value)) continue;
    else if (alias && part.write(`${prefix}.${alias}`, value)) continue;
    // A setting the status cannot show (AC airCleanOperationMode) is remembered: rows read it as $name.
    else part.write(`$${name}`, value);
  }
  return verbs;
}

/**
 * Applies a command to a virtual appliance: refused like a real device would, or its new status,
 * the change, and what the device remembers afterwards. `memory` and `simTime` come from the
 * simulator when it runs; without them the command applies to a device fresh from the catalog.
 */
export function applyCommand(model: CatalogModel, status: DeviceStatus, command: JsonObject, memory: Memory = emptyMemory(), simTime = 0): CommandOutcome {
  const profile = parsedProfile(model);
  const valid = validateCommand(profile, command);
  if (!valid.ok) return valid;
  const refusal = checkConditions(model.deviceType, profile, status, valid.value);
  if (refusal) return { ok: false, refusal };
  const { location, ...resources } = valid.value;
  const draft = new DeviceDraft(model, status, memory, simTime);
  const part = draft.part(isObject(location) ? String(location.locationName) : undefined) as Part;
  const before = new Part(part.set, cloneJson(part.values), draft.memory, part.location);
  const verbs = Object.entries(resources).flatMap(([resource, body]) => (isObject(body) ? applyResource(draft.behaviour, part, resource, body) : []));
  // Verbs run after the values, so that a START carrying a delay timer reserves rather than starts.
  armDelay(part, Object.keys(isObject(resources.timer) ? resources.timer : {}).map((name) => `timer.${name}`));
  for (const verb of verbs) if (draft.behaviour.programme) perform(draft.behaviour.programme, part, verb);
  settleCommand(draft.behaviour, part, before, draft.context());
  const { status: next, report, memory: remembered } = draft.finish();
  return { ok: true, status: next, report, memory: remembered };
}
