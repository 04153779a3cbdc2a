/** Air conditioners, air purifiers, dehumidifiers and ceiling fans: measured values that follow the mode and target. */
import type { Condition, Derived, Drift, Timer, TypeBehaviour, Writes } from '../behaviour.js';

const AC_POWER = 'operation.airConOperationMode';
const PURIFIER_POWER = 'operation.airPurifierOperationMode';
const DEHUMIDIFIER_POWER = 'operation.dehumidifierOperationMode';

/** The on/off timers of a powered appliance: relative ones count down, absolute ones fire at their time. */
function powerTimers(power: string): Timer[] {
  const on: Writes = { [power]: 'POWER_ON' };
  const off: Writes = { [power]: 'POWER_OFF' };
  const whenOn: Condition = { [power]: 'POWER_ON' };
  const whenOff: Condition = { [power]: 'POWER_OFF' };
  return [
    { id: 'start-in', kind: 'relative', hour: 'timer.relativeHourToStart', minute: 'timer.relativeMinuteToStart', flag: 'timer.relativeStartTimer', when: whenOff, set: on },
    { id: 'stop-in', kind: 'relative', hour: 'timer.relativeHourToStop', minute: 'timer.relativeMinuteToStop', flag: 'timer.relativeStopTimer', when: whenOn, set: off },
    { id: 'sleep', kind: 'relative', hour: 'sleepTimer.relativeHourToStop', minute: 'sleepTimer.relativeMinuteToStop', flag: 'sleepTimer.relativeStopTimer', when: whenOn, set: off },
    { id: 'start-at', kind: 'absolute', hour: 'timer.absoluteHourToStart', minute: 'timer.absoluteMinuteToStart', flag: 'timer.absoluteStartTimer', when: whenOff, set: on },
    { id: 'stop-at', kind: 'absolute', hour: 'timer.absoluteHourToStop', minute: 'timer.absoluteMinuteToStop', flag: 'timer.absoluteStopTimer', when: whenOn, set: off },
  ];
}

/** Particulates fall while something cleans the air and rise back to the room's level otherwise. */
function particulates(cleaning: readonly Condition[], clean: readonly [number, number, number], room: readonly [number, number, number]): Drift[] {
  const sensors = ['airQualitySensor.PM1', 'airQualitySensor.PM2', 'airQualitySensor.PM10'];
  return sensors.flatMap((path, i) => [
    ...cleaning.map((when): Drift => ({ path, when, toward: clean[i] as number, perMinute: 2, only: 'down', step: 1 })),
    { path, toward: room[i] as number, perMinute: 0.3, step: 1 },
  ]);
}

/** LG's pollution grades by PM2.5 (µg/m³). */
const POLLUTION: Derived[] = [
  { path: 'airQualitySensor.totalPollution', from: 'airQualitySensor.PM2', bands: [[15, 1], [35, 2], [75, 3], [Infinity, 4]] },
  { path: 'airQualitySensor.totalPollutionLevel', from: 'airQualitySensor.PM2', bands: [[15, 'GOOD'], [35, 'NORMAL'], [75, 'BAD'], [Infinity, 'VERY_BAD']] },
];

const POLLUTE = { summary: 'Pollute the room (someone is frying)', set: { 'airQualitySensor.PM1': 60, 'airQualitySensor.PM2': 90, 'airQualitySensor.PM10': 140 } };
const wearOut = (counter: string) => ({ action: 'wear-out', args: { counter } });

const acOn: Condition = { [AC_POWER]: 'POWER_ON' };
const ROOM_C = 28;

export const AIR_CONDITIONER: TypeBehaviour = {
  timers: powerTimers(AC_POWER),
  drifts: [
    { path: 'temperature.currentTemperature', when: { ...acOn, 'airConJobMode.currentJobMode': ['COOL', 'AIR_DRY', 'AUTO'] }, toward: 'temperature.targetTemperature', perMinute: 0.5, only: 'down', step: 0.5 },
    { path: 'temperature.currentTemperature', when: { ...acOn, 'airConJobMode.currentJobMode': ['HEAT', 'AUTO'] }, toward: 'temperature.targetTemperature', perMinute: 0.5, only: 'up', step: 0.5 },
    { path: 'temperature.currentTemperature', toward: ROOM_C, perMinute: 0.1, step: 0.5 },
    { path: 'airQualitySensor.humidity', when: { ...acOn, 'airConJobMode.currentJobMode': 'AIR_DRY' }, toward: 40, perMinute: 0.5, only: 'down', step: 1 },
    { path: 'airQualitySensor.humidity', when: { ...acOn, 'airConJobMode.currentJobMode': 'COOL' }, toward: 50, perMinute: 0.2, only: 'down', step: 1 },
    { path: 'airQualitySensor.humidity', toward: 60, perMinute: 0.1, step: 1 },
    ...particulates([{ ...acOn, 'airConJobMode.currentJobMode': 'AIR_CLEAN' }, { ...acOn, $airCleanOperationMode: 'START' }], [2, 4, 6], [10, 18, 30]),
  ],
  derived: [
    { path: 'temperatureInUnits[C].currentTemperature', from: 'temperature.currentTemperature' },
    { path: 'temperatureInUnits[F].currentTemperature', from: 'temperature.currentTemperature', convert: 'CtoF' },
    { path: 'twoSetTemperature.currentTemperature', from: 'temperature.currentTemperature' },
    ...POLLUTION,
  ],
  aliases: { coolTargetTemperature: 'targetTemperature', heatTargetTemperature: 'targetTemperature' },
  links: [
    { 'temperature.targetTemperature': 'C', 'temperatureInUnits[C].targetTemperature': 'C', 'temperatureInUnits[F].targetTemperature': 'F' },
    { 'twoSetTemperature.coolTargetTemperature': 'C', 'twoSetTemperatureInUnits[C].coolTargetTemperature': 'C', 'twoSetTemperatureInUnits[F].coolTargetTemperature': 'F' },
    { 'twoSetTemperature.heatTargetTemperature': 'C', 'twoSetTemperatureInUnits[C].heatTargetTemperature': 'C', 'twoSetTemperatureInUnits[F].heatTargetTemperature': 'F' },
  ],
  wear: [
    {
      id: 'filter',
      when: acOn,
      per: 'minute',
      limit: { path: 'filterInfo.filterLifetime', fallback: 2160 * 60 },
      shows: [{ path: 'filterInfo.usedTime', as: 'hours' }, { path: 'filterInfo.filterRemainPercent', as: 'remainPercent' }],
    },
    // The condensate a cooling or drying unit collects; a full one stops it until emptied.
    { id: 'bucket', when: { ...acOn, 'airConJobMode.currentJobMode': ['COOL', 'AIR_DRY'] }, per: 'minute', limit: 8 * 60, push: 'WATER_IS_FULL', then: { [AC_POWER]: 'POWER_OFF' } },
  ],
  actions: {
    'replace-filter': { summary: 'Fit a new filter', set: {}, resets: ['filter'] },
    'empty-bucket': { summary: 'Empty the water bucket', set: {}, resets: ['bucket'] },
    pollute: POLLUTE,
  },
  recipes: { WATER_IS_FULL: [wearOut('bucket')] },
};

const purifierOn: Condition = { [PURIFIER_POWER]: 'POWER_ON' };

export const AIR_PURIFIER: TypeBehaviour = {
  timers: powerTimers(PURIFIER_POWER),
  drifts: [
    ...particulates([purifierOn], [2, 3, 5], [12, 20, 35]),
    { path: 'airQualitySensor.odor', when: purifierOn, toward: 0, perMinute: 0.5, step: 1 },
    { path: 'airQualitySensor.odor', toward: 6, perMinute: 0.1, step: 1 },
  ],
  derived: [
    ...POLLUTION,
    { path: 'airQualitySensor.odorLevel', from: 'airQualitySensor.odor', bands: [[2, 'WEAK'], [5, 'NORMAL'], [10, 'STRONG'], [Infinity, 'VERY_STRONG']] },
    // The capture still carries LG's legacy misspelling beside the right key.
    { path: 'airQualitySensor.oder', from: 'airQualitySensor.odor' },
  ],
  holds: [{ id: 'polluted', when: { 'airQualitySensor.totalPollutionLevel': ['BAD', 'VERY_BAD'] }, minutes: 0, push: 'POLLUTION_IS_HIGH' }],
  wear: [
    { id: 'filter', when: purifierOn, per: 'minute', limit: 365 * 24 * 60, shows: [{ path: 'filterInfo.filterRemainPercent', as: 'remainPercent' }], push: 'TIME_TO_CHANGE_FILTER' },
    { id: 'pre-filter', when: purifierOn, per: 'minute', limit: 14 * 24 * 60, push: 'TIME_TO_CLEAN_FILTER' },
    { id: 'water-tank', when: purifierOn, per: 'minute', limit: 12 * 60, push: 'LACK_OF_WATER' },
  ],
  actions: {
    'replace-filter': { summary: 'Fit a new filter', set: {}, resets: ['filter'] },
    'clean-filter': { summary: 'Clean the pre-filter', set: {}, resets: ['pre-filter'] },
    'refill-water': { summary: 'Refill the humidifier tank', set: {}, resets: ['water-tank'] },
    pollute: POLLUTE,
  },
  recipes: {
    TIME_TO_CHANGE_FILTER: [wearOut('filter')],
    TIME_TO_CLEAN_FILTER: [wearOut('pre-filter')],
    LACK_OF_WATER: [wearOut('water-tank')],
    POLLUTION_IS_HIGH: [{ action: 'pollute' }],
  },
};

const dehumidifierOn: Condition = { [DEHUMIDIFIER_POWER]: 'POWER_ON' };

export const DEHUMIDIFIER: TypeBehaviour = {
  timers: powerTimers(DEHUMIDIFIER_POWER),
  drifts: [
    { path: 'humidity.currentHumidity', when: { ...dehumidifierOn, 'dehumidifierJobMode.currentJobMode': ['INTENSIVE_DRY', 'RAPID_HUMIDITY', 'CLOTHES_DRY'] }, toward: 'humidity.targetHumidity', perMinute: 1, only: 'down', step: 1 },
    { path: 'humidity.currentHumidity', when: dehumidifierOn, toward: 'humidity.targetHumidity', perMinute: 0.5, only: 'down', step: 1 },
    { path: 'humidity.currentHumidity', toward: 70, perMinute: 0.1, step: 1 },
  ],
  wear: [{ id: 'bucket', when: dehumidifierOn, per: 'minute', limit: 6 * 60, push: 'WATER_IS_FULL', then: { [DEHUMIDIFIER_POWER]: 'POWER_OFF' } }],
  actions: { 'empty-bucket': { summary: 'Empty the water bucket', set: {}, resets: ['bucket'] } },
  recipes: { WATER_IS_FULL: [wearOut('bucket')] },
};

/** A fan has nothing to measure: power and wind strength are its whole state, set by commands. */
export const CEILING_FAN: TypeBehaviour = { recipes: {} };
