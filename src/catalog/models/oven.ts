import type { JsonObject } from '../types.js';
import type { TypeModels } from './model.js';

const readOnly = (type: string, r?: unknown): JsonObject => ({ mode: ['r'], type, ...(r === undefined ? {} : { value: { r } }) });
const readWrite = (type: string, values: unknown, read = values): JsonObject => ({ mode: ['r', 'w'], type, value: { r: read, w: values } });

/**
 * One controllable oven cavity. The real capture is read-only and LG's example profile only offers
 * STOP, though LG's schema and both SDKs document PREHEATING/START/STOP, cookMode, a unit-keyed
 * target temperature and a target time; this location is built from that schema, in the shape the
 * SDKs send (`{"location", "operation", "cook", "temperature": {"targetTemperature", "unit"}}`).
 * The profile keeps a range per unit; the status shows the one unit the oven displays. A cavity at
 * rest shows a target of 0 (LG's documented status), below the lowest it can be set to.
 */
const ovenLocation = (locationName: string): JsonObject => ({
  location: { locationName },
  remoteControlEnable: { remoteControlEnabled: readOnly('boolean', [false, true]) },
  runState: {
    currentState: readOnly('enum', ['INITIAL', 'PREHEATING', 'PREHEATING_IS_DONE', 'COOKING_IN_PROGRESS', 'PAUSE', 'DONE', 'COOLING', 'CLEANING', 'CLEANING_IS_DONE', 'ERROR']),
  },
  operation: { ovenOperationMode: { mode: ['w'], type: 'enum', value: { w: ['PREHEATING', 'START', 'STOP'] } } },
  cook: { cookMode: readWrite('enum', ['BAKE', 'CONVECTION_BAKE', 'CONVECTION_ROAST', 'ROAST', 'CRISP_CONVECTION']) },
  temperature: [
    { targetTemperature: readWrite('range', { min: 170, max: 550, step: 5 }, { min: 0, max: 550, step: 5 }), unit: 'F' },
    { targetTemperature: readWrite('range', { min: 75, max: 285, step: 5 }, { min: 0, max: 285, step: 5 }), unit: 'C' },
  ],
  timer: {
    remainHour: readOnly('number'),
    remainMinute: readOnly('number'),
    remainSecond: readOnly('number'),
    targetHour: readWrite('range', { min: 0, max: 23, step: 1 }),
    targetMinute: readWrite('range', { min: 0, max: 59, step: 1 }),
  },
});

const PUSH = { push: ['PREHEATING_IS_COMPLETE', 'COOKING_IS_COMPLETE', 'ERROR_HAS_OCCURRED', 'TIME_TO_CLEAN'] };

const SINGLE_OVEN: JsonObject = { notification: PUSH, property: [ovenLocation('OVEN')], extensionProperty: { info: { type: 'SINGLE' } } };

/** Upper and lower cavities, as LG's documented status and command address them. */
const DOUBLE_OVEN: JsonObject = {
  notification: PUSH,
  property: [ovenLocation('UPPER'), ovenLocation('LOWER')],
  extensionProperty: { info: { type: 'DOUBLE_UL' } },
};

/** Idle, showing LG's documented 350 °F. */
const SANDBOX = { 'runState.currentState': 'INITIAL', 'temperature[F].targetTemperature': 350 };

export const oven: TypeModels = {
  deviceType: 'DEVICE_OVEN',
  models: [
    {
      modelName: 'OVEN_910604_WW',
      origin: "single oven built from LG's oven schema (see ovenLocation); model name invented in LG's style",
      profile: { own: SINGLE_OVEN },
      sandbox: SANDBOX,
    },
    {
      modelName: 'DOUBLE_OVEN_910604_WW',
      origin: 'real capture of a double oven (Home Assistant fixture; its device.json says "Test oven"), read-only',
      profile: 'oven/profile.json',
      status: 'oven/status.json',
      sandbox: { 'runState.currentState': 'INITIAL' },
    },
    {
      modelName: 'DOUBLE_OVEN_920604_WW',
      origin: "controllable double oven (UPPER, LOWER) built from LG's oven schema, for LG's documented LOWER command; model name invented in LG's style",
      profile: { own: DOUBLE_OVEN },
      sandbox: SANDBOX,
    },
  ],
};
