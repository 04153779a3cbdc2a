/**
 * Issue 17: controls in the shapes LG documents are accepted for every type. Every command of every
 * reference/thinq/.../lgdoc_command.json of a catalog type, and the location- and unit-addressed
 * bodies LG's examples and SDKs send (reference/thinq/NOTES.md), go through the partner API to a
 * virtual appliance, with `x-conditional-control: true` as both SDKs send it. Each is answered
 * with the full status, holding what it set, in the shape of LG's statuses; a command LG documents
 * wrongly is refused with the code that names its fault.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getModel, listReadable, parsedProfile, validateCommand, validateReport, valueAt } from '../../src/catalog/index.js';
import type { JsonObject } from '../../src/catalog/types.js';
import type { Refusal } from '../../src/errors.js';
import { devicesOf, DOCUMENTS_OF_TYPE, FOLDERS, hasFile, NOT_SERVED } from '../catalog/fixtures.js';
import { comparisons, DISAGREEMENTS, shapeDifferences } from '../catalog/shapes.js';
import { callAdmin, createWorld, testApp, type TestApp, type World } from '../helpers/app.js';

/** The catalog type of each device name of `devicesOf`. */
const TYPE_OF = new Map(Object.entries(DOCUMENTS_OF_TYPE).flatMap(([deviceType, names]) => names.map((name) => [name, deviceType] as const)));

/** LG's command addresses a location the type's default model lacks: LOWER, of a double oven. */
const MODEL_FOR: Readonly<Record<string, string>> = { oven: 'DOUBLE_OVEN_920604_WW' };

/** A state the appliance is put in first (by its own report), where the documented command applies. */
const PREPARED: Readonly<Record<string, JsonObject>> = {
  // HOMING calls a cleaning robot back; the default robot sits on its dock already (2302).
  robot_cleaner: { runState: { currentState: 'WORKING' } },
};

/**
 * LG's documented commands that are wrong for the type, refused as test/catalog/reference.test.ts
 * pins them against LG's own example profiles.
 */
const REFUSED: Readonly<Record<string, Refusal>> = {
  // LG copied the humidifier's example into the dehumidifier docs.
  dehumidifier: { code: '2207', message: 'Resource "humidifierJobMode" is not in the profile of this device' },
  // LG's schema makes powerSave read-only, and neither LG's example profile nor our model has it.
  refrigerator: { code: '2207', message: 'Resource "powerSave" is not in the profile of this device' },
};

const DOCUMENTED = FOLDERS.filter((folder) => hasFile(folder, 'lgdoc_command.json'))
  .flatMap((folder) => devicesOf(folder, 'lgdoc_command.json'))
  .filter(({ name }) => TYPE_OF.has(name));

/**
 * Addressed bodies from LG's examples and the SDKs' verified payloads (NOTES.md, sections a and b),
 * and documented commands on models other than the type's default.
 */
const ADDRESSED: readonly { label: string; deviceType: string; modelName?: string; command: JsonObject }[] = [
  { label: 'a refrigerator entry by locationName, with its read-only unit (LG example)', deviceType: 'DEVICE_REFRIGERATOR', command: { temperature: { targetTemperature: 0, locationName: 'FRIDGE', unit: 'C' } } },
  { label: 'a refrigerator entry by locationName (SDK setTargetTemperatureC)', deviceType: 'DEVICE_REFRIGERATOR', command: { temperatureInUnits: { locationName: 'FRIDGE', unit: 'C', targetTemperatureC: 3 } } },
  { label: 'an air-conditioner entry by unit (SDK cool target)', deviceType: 'DEVICE_AIR_CONDITIONER', command: { temperatureInUnits: { coolTargetTemperature: 24, unit: 'C' } } },
  {
    label: 'an oven location with its temperature by unit (SDK setCookModeWithTemperatureC)',
    deviceType: 'DEVICE_OVEN',
    command: { location: { locationName: 'OVEN' }, operation: { ovenOperationMode: 'START' }, cook: { cookMode: 'ROAST' }, temperature: { targetTemperature: 200, unit: 'C' } },
  },
  { label: 'a washer location (SDK setRelativeHourToStart)', deviceType: 'DEVICE_WASHER', command: { location: { locationName: 'MAIN' }, timer: { relativeHourToStart: 3 } } },
  {
    label: "an air conditioner's absolute start timer on the model of LG's example profile (LG example)",
    deviceType: 'DEVICE_AIR_CONDITIONER',
    modelName: 'RAC_910604_WW',
    command: { timer: { absoluteHourToStart: 10, absoluteMinuteToStart: 36 } },
  },
  { label: "a robot cleaner's start time (SDK setAbsoluteTimeToStart)", deviceType: 'DEVICE_ROBOT_CLEANER', command: { timer: { absoluteHourToStart: 22, absoluteMinuteToStart: 30 } } },
];

describe('controls in the shapes LG documents', () => {
  let t: TestApp;
  let world: World;
  beforeAll(async () => {
    t = await testApp();
    world = await createWorld(t.ctx, { deviceTypes: [] });
    await t.app.inject({ method: 'GET', url: '/devices', headers: world.headers() });
  });
  afterAll(() => t.close());

  /** A fresh virtual appliance of the model, in the prepared state. */
  async function appliance(deviceType: string, modelName: string, prepared?: JsonObject): Promise<string> {
    const res = await callAdmin(t.app, 'POST', `/admin/users/${world.userNumber}/devices`, { deviceType, modelName, alias: modelName, virtual: true });
    const { deviceId } = res.json().response as { deviceId: string };
    if (prepared) expect((await callAdmin(t.app, 'POST', `/admin/devices/${deviceId}/report`, prepared)).statusCode).toBe(200);
    return deviceId;
  }

  const control = (deviceId: string, command: unknown) =>
    t.app.inject({ method: 'POST', url: `/devices/${deviceId}`, headers: world.headers({ 'x-conditional-control': 'true' }), payload: command as JsonObject });

  /** The answer is the full status: valid for the profile, what a read returns, holding what the command set, shaped as LG's statuses. */
  async function expectApplied(deviceId: string, deviceType: string, modelName: string, command: JsonObject, answer: JsonObject): Promise<void> {
    const profile = parsedProfile(getModel(deviceType, modelName)!);
    expect(validateReport(profile, answer)).toMatchObject({ ok: true });
    expect((await t.app.inject({ method: 'GET', url: `/devices/${deviceId}`, headers: world.headers() })).json().response).toEqual(answer);
    const normalised = validateCommand(profile, command);
    if (!normalised.ok) throw new Error(normalised.refusal.message);
    for (const item of listReadable(profile)) {
      const set = valueAt(normalised.value, item);
      if (set !== undefined) expect(valueAt(answer, item), item.path).toEqual(set);
    }
    for (const { key, document } of comparisons(deviceType)) expect(shapeDifferences(profile, answer, document, 'status'), key).toEqual(DISAGREEMENTS[key] ?? []);
  }

  it('covers every lgdoc_command.json: of a catalog type, or of a type the catalog does not serve', () => {
    const withCommands = FOLDERS.filter((folder) => hasFile(folder, 'lgdoc_command.json'));
    const served = new Set(DOCUMENTED.map(({ name }) => name.split('#')[0]));
    expect(withCommands.filter((folder) => !served.has(folder))).toEqual(NOT_SERVED.filter((folder) => withCommands.includes(folder)));
    for (const folder of [...Object.keys(MODEL_FOR), ...Object.keys(PREPARED), ...Object.keys(REFUSED)]) expect(served, folder).toContain(folder);
  });

  it.each(DOCUMENTED.map(({ name, document }) => [name, document] as const))("%s: LG's documented command", async (name, document) => {
    const folder = name.split('#')[0] as string;
    const deviceType = TYPE_OF.get(name) as string;
    const modelName = MODEL_FOR[folder] ?? (getModel(deviceType)?.modelName as string);
    const deviceId = await appliance(deviceType, modelName, PREPARED[folder]);
    const res = await control(deviceId, document);
    const refusal = REFUSED[folder];
    if (refusal) {
      expect([res.statusCode, res.json().error]).toEqual([400, refusal]);
      return;
    }
    expect(res.statusCode, res.body).toBe(200);
    await expectApplied(deviceId, deviceType, modelName, document as JsonObject, res.json().response);
  });

  it.each(ADDRESSED.map((a) => [a.label, a] as const))('%s', async (_label, { deviceType, modelName: named, command }) => {
    const modelName = named ?? (getModel(deviceType)?.modelName as string);
    const deviceId = await appliance(deviceType, modelName);
    const res = await control(deviceId, command);
    expect(res.statusCode, res.body).toBe(200);
    await expectApplied(deviceId, deviceType, modelName, command, res.json().response);
  });
});
