/**
 * Issue 3's fidelity, iterated from the catalog (STYLE habit 12): for every model of every type,
 * every readable property shows a value its profile allows; every writable property takes each
 * legal value through a command and reads it back (a write-only one does what its table says);
 * every push code of the profile can be raised by the simulation, driven by the manual clock.
 */
import { describe, expect, it } from 'vitest';
import { CONDITION_RULES } from '../../src/catalog/conditions.js';
import { commandFor, legalValues, listModels, listReadable, listWritable, parsedProfile, validateReport, valueAt, type ListedProperty } from '../../src/catalog/index.js';
import type { CatalogModel, JsonObject } from '../../src/catalog/types.js';
import { valueProblem } from '../../src/catalog/values.js';
import type { Programme } from '../../src/sim/behaviour.js';
import { behaviourOf } from '../../src/sim/tables/index.js';
import { applyCommand } from '../../src/sim/virtual.js';
import { shownReadable } from '../catalog/fixtures.js';
import { simWorld, type SimWorld } from './helpers.js';

const MODELS = listModels().map((model) => [`${model.deviceType} ${model.modelName}`, model] as const);

function readableAt(model: CatalogModel, item: ListedProperty, resource: string, name: string): ListedProperty | undefined {
  return listReadable(parsedProfile(model)).find(
    (r) => r.resource === resource && r.name === name && r.address.location === item.address.location && r.address.entry?.name === item.address.entry?.name,
  );
}

function statesOf(model: CatalogModel, item: ListedProperty): string[] {
  const runState = readableAt(model, item, 'runState', 'currentState');
  return runState?.property.type === 'enum' ? runState.property.read : [];
}

/** A run state from which the command is valid, by the conditions table (never ERROR). */
function preparedState(model: CatalogModel, item: ListedProperty, value: unknown): string | undefined {
  const rule = CONDITION_RULES[model.deviceType]?.operation?.commands[String(value)];
  if (!rule) return undefined;
  const states = statesOf(model, item).filter((s) => s !== 'ERROR');
  return 'allowedIn' in rule ? rule.allowedIn.find((s) => states.includes(s)) : states.find((s) => !rule.refusedIn.includes(s));
}

/** The run state the programme table says an operation value leads to, on a device no command armed a delay on. */
function expectedState(programme: Programme, states: string[], value: unknown): string | undefined {
  const verb = programme.commands[String(value)];
  const first = (candidates: readonly string[]) => candidates.find((s) => states.includes(s));
  const phase = first(programme.phases.map(([state]) => state));
  if (verb === undefined) return undefined;
  if (verb === 'stop') return first(programme.idle);
  if (verb === 'pause') return programme.paused;
  if (verb === 'resume' || verb === 'start') return phase;
  return first(verb.state);
}

async function runRecipe(w: SimWorld, deviceId: string, steps: readonly { action?: string; args?: unknown; command?: unknown; minutes?: number }[]): Promise<void> {
  for (const step of steps) {
    if (step.minutes) await w.minutes(step.minutes);
    if (step.action) await w.ctx.simulator.act(deviceId, step.action, step.args);
    if (step.command) await w.control(deviceId, step.command as JsonObject);
  }
}

describe.each(MODELS)('%s', (_, model) => {
  const profile = parsedProfile(model);
  const behaviour = behaviourOf(model.deviceType);

  it('shows every readable property with a value its profile allows, before and after a simulated hour', async () => {
    const w = await simWorld();
    const deviceId = await w.add(model.deviceType, model.modelName);
    for (const minutes of [0, 60]) {
      await w.minutes(minutes);
      const status = await w.status(deviceId);
      for (const item of shownReadable(profile, status)) expect(valueProblem(item.name, item.property, valueAt(status, item), 'r'), item.path).toBeNull();
    }
    await w.close();
  });

  const writes = listWritable(profile).flatMap((item) => legalValues(item.property, 'w').map((value) => [item, value] as const));

  it.skipIf(writes.length === 0)('takes each legal value of every writable property through a command', async () => {
    const w = await simWorld({ start: false });
    for (const [item, value] of writes) {
      // A device of its own for each value: what an earlier command set (or armed) cannot help or hinder it.
      const deviceId = await w.add(model.deviceType, model.modelName);
      const state = preparedState(model, item, value);
      const stateItem = readableAt(model, item, 'runState', 'currentState');
      if (state && stateItem) await w.ctx.devices.report(deviceId, commandFor(stateItem, state));
      const before = await w.status(deviceId);
      const status = await w.control(deviceId, commandFor(item, value));
      const label = `${item.path} = ${JSON.stringify(value)}`;
      if (item.property.readable) {
        expect(valueAt(status, item), label).toEqual(value);
        continue;
      }
      const { programme, aliases } = behaviour;
      const alias = aliases?.[item.name];
      if (programme?.operation === item.name && programme.commands[String(value)]) {
        expect(valueAt(status, stateItem as ListedProperty), label).toBe(expectedState(programme, statesOf(model, item), value));
      } else if (alias) {
        expect(valueAt(status, readableAt(model, item, item.resource, alias) as ListedProperty), label).toEqual(value);
      } else {
        // Nothing in the status shows it: the appliance remembers it for the rows that read `$name`.
        const outcome = applyCommand(model, before, commandFor(item, value));
        const key = item.address.location === undefined ? item.name : `${item.address.location}/${item.name}`;
        expect(outcome.ok && outcome.memory.flags[key], label).toEqual(value);
      }
    }
    await w.close();
  });

  for (const pushCode of profile.pushCodes) {
    it(`raises ${pushCode} when its recipe is followed and simulated time passes`, async () => {
      const recipe = behaviour.recipes[pushCode];
      expect(recipe, `a recipe for ${pushCode}`).toBeDefined();
      const w = await simWorld();
      const deviceId = await w.add(model.deviceType, model.modelName);
      await runRecipe(w, deviceId, recipe ?? []);
      await w.until(async () => (await w.pushCodes(deviceId)).includes(pushCode), 300);
      expect(validateReport(profile, await w.status(deviceId))).toMatchObject({ ok: true });
      await w.close();
    });
  }
});
