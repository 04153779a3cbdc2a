/**
 * Conditional control (DESIGN A.7.2): whether a valid command can apply to the device as it is now.
 * The rules are data, one row per appliance type, read by one function. The virtual appliance applies
 * the same rules whether or not the partner asked (A.7.3).
 */
import type { Refusal } from '../errors.js';
import type { DeviceStatus, JsonObject, ParsedProfile } from './types.js';
import { isObject, own } from './values.js';

type Path = readonly [resource: string, property: string];

/** The run states an operation command is valid in, as a list of allowed states or of refused ones. */
type CommandRule = { allowedIn: readonly string[] } | { refusedIn: readonly string[] };
type CommandTable = Readonly<Record<string, CommandRule>>;

/** A mode in which some resources cannot be set: 2305. */
interface ModeRule {
  mode: Path;
  blocks: readonly unknown[];
  resources: readonly string[];
}

interface TypeRules {
  /** The operation property whose commands move the run state, and where each is valid. */
  operation?: { path: Path; commands: CommandTable };
  /** A readable power property that reads POWER_OFF when the appliance is off (AC, purifier, ...). */
  power?: Path;
  /** Properties the run state decides, as it decides commands. */
  settings?: { properties: readonly Path[]; rule: CommandRule };
  /** What the appliance takes while off: the timers that will switch it on. */
  whileOff?: Readonly<Record<string, readonly string[]>>;
  modes?: readonly ModeRule[];
}

const RUN_STATE: Path = ['runState', 'currentState'];
const REMOTE_CONTROL: Path = ['remoteControlEnable', 'remoteControlEnabled'];
/** Commands that power an appliance on (a washer's remote START does too). */
const POWERS_ON: readonly unknown[] = ['START', 'WAKE_UP', 'POWER_ON'];
/** The only commands a device in an error state accepts. */
const ACCEPTED_IN_ERROR: readonly unknown[] = ['STOP', 'POWER_OFF'];

/** A washer, dryer, styler or dish washer: a cycle starts from idle and stops while active. */
const CYCLE_IDLE = ['INITIAL', 'END', 'COMPLETE', 'CANCEL'];
const CYCLE: CommandTable = {
  START: { allowedIn: ['POWER_OFF', 'PAUSE', ...CYCLE_IDLE] },
  STOP: { refusedIn: ['POWER_OFF', 'SLEEP', ...CYCLE_IDLE] },
  CANCEL: { refusedIn: ['POWER_OFF', 'SLEEP', ...CYCLE_IDLE] },
  WAKE_UP: { allowedIn: ['POWER_OFF', 'SLEEP'] },
  POWER_ON: { allowedIn: ['POWER_OFF', 'SLEEP'] },
};

const ROBOT: CommandTable = {
  START: { allowedIn: ['CHARGING', 'STANDBY', 'PAUSE', 'HOMING', 'RESERVATION'] },
  RESUME: { allowedIn: ['PAUSE'] },
  PAUSE: { allowedIn: ['WORKING', 'MACROSECTOR', 'HOMING'] },
  HOMING: { refusedIn: ['HOMING', 'CHARGING', 'SLEEP'] },
  WAKE_UP: { allowedIn: ['SLEEP'] },
};

const OVEN: CommandTable = {
  PREHEATING: { allowedIn: ['INITIAL', 'DONE', 'COOLING', 'CLEANING_IS_DONE'] },
  START: { allowedIn: ['INITIAL', 'PREHEATING', 'PREHEATING_IS_DONE', 'PAUSE', 'DONE', 'COOLING', 'CLEANING_IS_DONE'] },
  STOP: { allowedIn: ['PREHEATING', 'PREHEATING_IS_DONE', 'COOKING_IN_PROGRESS', 'PAUSE', 'CLEANING'] },
};

/** A start timer is set while the appliance is off: it is how the appliance is told to switch itself on later. */
const START_TIMERS = { timer: ['relativeHourToStart', 'relativeMinuteToStart', 'relativeStartTimer', 'absoluteHourToStart', 'absoluteMinuteToStart', 'absoluteStartTimer'] };
const powered = (property: string): TypeRules => ({ power: ['operation', property], whileOff: START_TIMERS });

/** A delay timer is set before a cycle starts (with its START, or before it); a running cycle is not re-timed. */
const DELAY_TIMERS: TypeRules['settings'] = {
  properties: ['relativeHourToStart', 'relativeMinuteToStart', 'relativeHourToStop', 'relativeMinuteToStop'].map((name): Path => ['timer', name]),
  rule: { allowedIn: ['POWER_OFF', 'SLEEP', ...CYCLE_IDLE] },
};

const cycle = (property: string): TypeRules => ({ operation: { path: ['operation', property], commands: CYCLE }, settings: DELAY_TIMERS });

/** Fan-only and air-clean modes hold no temperature target; the two-set targets need two-set enabled. */
const AIR_CONDITIONER_MODES: readonly ModeRule[] = [
  { mode: ['airConJobMode', 'currentJobMode'], blocks: ['FAN', 'AIR_CLEAN'], resources: ['temperature', 'temperatureInUnits', 'twoSetTemperature', 'twoSetTemperatureInUnits'] },
  { mode: ['twoSetTemperature', 'twoSetEnabled'], blocks: [false], resources: ['twoSetTemperature', 'twoSetTemperatureInUnits'] },
];

/** The rules of each catalog type; a type without a row (refrigerator, water purifier) has no conditions. */
export const CONDITION_RULES: Readonly<Record<string, TypeRules>> = {
  DEVICE_WASHER: cycle('washerOperationMode'),
  DEVICE_WASHTOWER_WASHER: cycle('washerOperationMode'),
  DEVICE_DRYER: cycle('dryerOperationMode'),
  DEVICE_WASHTOWER_DRYER: cycle('dryerOperationMode'),
  DEVICE_STYLER: cycle('stylerOperationMode'),
  DEVICE_DISH_WASHER: cycle('dishWasherOperationMode'),
  DEVICE_ROBOT_CLEANER: { operation: { path: ['operation', 'cleanOperationMode'], commands: ROBOT } },
  DEVICE_OVEN: { operation: { path: ['operation', 'ovenOperationMode'], commands: OVEN } },
  DEVICE_AIR_CONDITIONER: { ...powered('airConOperationMode'), modes: AIR_CONDITIONER_MODES },
  DEVICE_AIR_PURIFIER: powered('airPurifierOperationMode'),
  DEVICE_DEHUMIDIFIER: powered('dehumidifierOperationMode'),
  DEVICE_CEILING_FAN: powered('ceilingfanOperationMode'),
};

function at(part: JsonObject, [resource, property]: Path): unknown {
  const body = part[resource];
  return isObject(body) ? body[property] : undefined;
}

/** The status of the location a command addresses (whole-profile-array devices), else the whole status. */
function addressedStatus(profile: ParsedProfile, status: DeviceStatus, command: JsonObject): JsonObject {
  if (!Array.isArray(status)) return status;
  const name = isObject(command.location) ? command.location.locationName : profile.locations?.[0]?.name;
  return status.find((e) => isObject(e.location) && e.location.locationName === name) ?? {};
}

function permits(rule: CommandRule, state: string): boolean {
  return 'allowedIn' in rule ? rule.allowedIn.includes(state) : !rule.refusedIn.includes(state);
}

/** The first property a command sets in a resource, skipping the keys that only address an entry. */
function firstPropertySet(body: unknown): string | undefined {
  const entry = Array.isArray(body) ? body[0] : body;
  return isObject(entry) ? Object.keys(entry).find((k) => k !== 'locationName' && k !== 'unit') : undefined;
}

/** Whether every property the command sets is one the appliance takes while off. */
function onlyTakenWhileOff(rules: TypeRules, command: JsonObject): boolean {
  const taken = rules.whileOff ?? {};
  return Object.entries(command).every(([resource, body]) => {
    const allowed = own(taken, resource);
    return allowed !== undefined && isObject(body) && Object.keys(body).every((property) => allowed.includes(property));
  });
}

function modeConflict(rules: TypeRules, current: JsonObject, command: JsonObject): Refusal | null {
  for (const rule of rules.modes ?? []) {
    // The mode the device will be in: the command may change it in the same breath.
    const mode = at(command, rule.mode) ?? at(current, rule.mode);
    if (!rule.blocks.includes(mode)) continue;
    for (const resource of rule.resources) {
      const property = firstPropertySet(command[resource]);
      if (property) return { code: '2305', message: `${property} cannot be set while ${rule.mode.join('.')} is ${String(mode)}` };
    }
  }
  return null;
}

/** Why a valid command cannot apply to the device in `status` now (2301–2305), or null when it can. */
export function checkConditions(deviceType: string, profile: ParsedProfile, status: DeviceStatus, command: JsonObject): Refusal | null {
  const rules = own(CONDITION_RULES, deviceType) ?? {};
  const current = addressedStatus(profile, status, command);
  // LG ties 2301 to the appliance's Remote Start switch: while it is off, no remote control at all.
  if (at(current, REMOTE_CONTROL) === false) {
    return { code: '2301', message: 'Remote control is off (remoteControlEnable.remoteControlEnabled is false)' };
  }
  const operationPath = rules.operation?.path ?? rules.power;
  const operation = operationPath ? at(command, operationPath) : undefined;
  const state = at(current, RUN_STATE);
  if (state === 'ERROR' && !ACCEPTED_IN_ERROR.includes(operation)) {
    return { code: '2303', message: 'The device is in an error state (runState.currentState is ERROR); only STOP or POWER_OFF is accepted' };
  }
  const offBy = state === 'POWER_OFF' ? RUN_STATE : rules.power && at(current, rules.power) === 'POWER_OFF' ? rules.power : null;
  if (offBy && !POWERS_ON.includes(operation) && !onlyTakenWhileOff(rules, command)) {
    return { code: '2304', message: `The device is powered off (${offBy.join('.')} is POWER_OFF) and the command does not power it on` };
  }
  const rule = rules.operation && typeof operation === 'string' ? own(rules.operation.commands, operation) : undefined;
  if (rule && typeof state === 'string' && !permits(rule, state)) {
    return { code: '2302', message: `${String(operation)} is not valid while runState.currentState is ${state}` };
  }
  const { settings } = rules;
  const setting = settings && typeof state === 'string' && !permits(settings.rule, state) ? settings.properties.find((path) => at(command, path) !== undefined) : undefined;
  if (setting) return { code: '2302', message: `${setting[1]} cannot be set while runState.currentState is ${String(state)}` };
  return modeConflict(rules, current, command);
}
