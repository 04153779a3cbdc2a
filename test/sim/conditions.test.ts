/**
 * Conditional control (DESIGN A.7.2–3) on every model where a code applies, iterated from the
 * catalog and the conditions table: the refusal names the blocking property and its value, and the
 * virtual device refuses the same way when the partner did not ask for conditions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONDITION_RULES } from '../../src/catalog/conditions.js';
import { commandFor, legalValues, listModels, listReadable, listWritable, parsedProfile, type ListedProperty } from '../../src/catalog/index.js';
import type { CatalogModel, JsonObject } from '../../src/catalog/types.js';
import { simWorld, type SimWorld } from './helpers.js';

interface Case {
  label: string;
  model: CatalogModel;
  /** Reports that put the device where the command cannot apply. */
  setup: JsonObject[];
  command: JsonObject;
  code: string;
  names: string;
}

const find = (model: CatalogModel, resource: string, name: string): ListedProperty | undefined =>
  listReadable(parsedProfile(model)).find((p) => p.resource === resource && p.name === name);

const states = (model: CatalogModel): string[] => {
  const runState = find(model, 'runState', 'currentState');
  return runState?.property.type === 'enum' ? runState.property.read : [];
};

/** Any command the model takes that is not an operation: the first value of its first such writable property. */
function someCommand(model: CatalogModel, operation?: string): JsonObject | undefined {
  const item = listWritable(parsedProfile(model)).find((p) => p.name !== operation && p.resource !== 'operation');
  return item && commandFor(item, legalValues(item.property, 'w')[0]);
}

function casesOf(model: CatalogModel): Case[] {
  const rules = CONDITION_RULES[model.deviceType] ?? {};
  const cases: Case[] = [];
  const label = (code: string, what: string) => `${model.modelName}: ${code} ${what}`;
  const operation = rules.operation && listWritable(parsedProfile(model)).find((p) => p.name === rules.operation?.path[1]);
  const start = operation && commandFor(operation, 'START');
  const remote = find(model, 'remoteControlEnable', 'remoteControlEnabled');
  const anyCommand = start ?? someCommand(model);
  if (remote && anyCommand) {
    cases.push({ label: label('2301', 'remote control off'), model, setup: [commandFor(remote, false)], command: anyCommand, code: '2301', names: 'remoteControlEnable.remoteControlEnabled is false' });
  }
  const runState = find(model, 'runState', 'currentState');
  if (runState && states(model).includes('ERROR') && anyCommand) {
    cases.push({ label: label('2303', 'in error'), model, setup: [commandFor(runState, 'ERROR')], command: anyCommand, code: '2303', names: 'runState.currentState is ERROR' });
  }
  const power = rules.power && find(model, rules.power[0], rules.power[1]);
  const other = someCommand(model, rules.power?.[1]);
  if (power && other) {
    cases.push({ label: label('2304', 'powered off'), model, setup: [commandFor(power, 'POWER_OFF')], command: other, code: '2304', names: `${rules.power?.join('.')} is POWER_OFF` });
  }
  for (const [value, rule] of Object.entries(rules.operation?.commands ?? {})) {
    const blocked = states(model).filter((s) => !['ERROR', 'POWER_OFF'].includes(s) && ('allowedIn' in rule ? !rule.allowedIn.includes(s) : rule.refusedIn.includes(s)));
    if (!operation || !runState || !blocked[0] || !legalValues(operation.property, 'w').includes(value)) continue;
    cases.push({ label: label('2302', `${value} in ${blocked[0]}`), model, setup: [commandFor(runState, blocked[0])], command: commandFor(operation, value), code: '2302', names: `${value} is not valid while runState.currentState is ${blocked[0]}` });
  }
  for (const mode of rules.modes ?? []) {
    const modeItem = find(model, mode.mode[0], mode.mode[1]);
    const blocking = modeItem && legalValues(modeItem.property, 'r').find((v) => mode.blocks.includes(v));
    const target = listWritable(parsedProfile(model)).find((p) => mode.resources.includes(p.resource));
    if (!modeItem || blocking === undefined || !target) continue;
    const command = commandFor(target, legalValues(target.property, 'w')[0]);
    cases.push({ label: label('2305', `${target.path} while ${mode.mode.join('.')} is ${String(blocking)}`), model, setup: [commandFor(modeItem, blocking)], command, code: '2305', names: `${mode.mode.join('.')} is ${String(blocking)}` });
  }
  return cases;
}

const CASES = listModels().flatMap(casesOf);

describe('conditional control on virtual appliances', () => {
  let w: SimWorld;
  beforeAll(async () => {
    w = await simWorld({ start: false });
  });
  afterAll(() => w.close());

  it('has a case for each code where the catalog gives it one', () => {
    const codes = new Set(CASES.map((c) => c.code));
    expect([...codes].sort()).toEqual(['2301', '2302', '2303', '2304', '2305']);
    expect(new Set(CASES.map((c) => c.model.deviceType)).size).toBeGreaterThanOrEqual(11);
  });

  it.each(CASES.map((c) => [c.label, c] as const))('%s', async (_, c) => {
    const deviceId = await w.add(c.model.deviceType, c.model.modelName);
    for (const report of c.setup) await w.ctx.devices.report(deviceId, report);
    const device = await w.ctx.devices.get(deviceId);
    for (const conditional of [true, false]) {
      await expect(w.ctx.devices.control(device, c.command, conditional)).rejects.toMatchObject({ code: c.code, message: expect.stringContaining(c.names) });
    }
  });
});
