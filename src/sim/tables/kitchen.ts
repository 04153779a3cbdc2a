/** Ovens, refrigerators and water purifiers. */
import type { TypeBehaviour } from '../behaviour.js';

const STATE = 'runState.currentState';
const OVEN_AT_REST = ['INITIAL', 'DONE', 'COOLING', 'CLEANING_IS_DONE'];

/** Each location of an oven (OVEN, UPPER, LOWER) runs these rows on its own. */
export const OVEN: TypeBehaviour = {
  programme: {
    operation: 'ovenOperationMode',
    commands: { PREHEATING: { state: ['PREHEATING'] }, START: 'start', STOP: 'stop' },
    phases: [['COOKING_IN_PROGRESS', 1]],
    // The cook timer the partner set; 0:00 cooks until stopped.
    length: { hour: 'timer.targetHour', minute: 'timer.targetMinute' },
    display: 'remain',
    ended: ['DONE'],
    idle: ['INITIAL'],
    paused: 'PAUSE',
    startableIn: ['PREHEATING', 'PREHEATING_IS_DONE', 'PAUSE', ...OVEN_AT_REST],
    done: 'COOKING_IS_COMPLETE',
    failures: ['ERROR_HAS_OCCURRED'],
  },
  holds: [
    { id: 'preheated', when: { [STATE]: 'PREHEATING' }, minutes: 12, set: { [STATE]: 'PREHEATING_IS_DONE' }, push: 'PREHEATING_IS_COMPLETE' },
    { id: 'cools-down', when: { [STATE]: 'DONE' }, minutes: 5, set: { [STATE]: 'COOLING' } },
    { id: 'cooled', when: { [STATE]: 'COOLING' }, minutes: 15, set: { [STATE]: 'INITIAL' } },
    { id: 'cleaned', when: { [STATE]: 'CLEANING' }, minutes: 120, set: { [STATE]: 'CLEANING_IS_DONE' } },
  ],
  wear: [{ id: 'cleanliness', when: { [STATE]: 'COOKING_IN_PROGRESS' }, per: 'minute', limit: 50 * 60, push: 'TIME_TO_CLEAN' }],
  actions: {
    preheat: { summary: 'Press preheat at the oven', when: { [STATE]: OVEN_AT_REST }, set: { [STATE]: 'PREHEATING' } },
    'self-clean': { summary: 'Run the self-cleaning cycle', when: { [STATE]: OVEN_AT_REST }, set: { [STATE]: 'CLEANING' }, resets: ['cleanliness'] },
  },
  recipes: {
    PREHEATING_IS_COMPLETE: [{ action: 'preheat' }],
    COOKING_IS_COMPLETE: [{ action: 'start', args: { minutes: 20 } }],
    ERROR_HAS_OCCURRED: [{ action: 'start', args: { minutes: 20 } }, { action: 'raise-error' }],
    TIME_TO_CLEAN: [{ action: 'wear-out' }, { action: 'start', args: { minutes: 20 } }],
  },
};

const SIX_MONTHS = 6 * 30 * 24 * 60;

export const REFRIGERATOR: TypeBehaviour = {
  holds: [
    { id: 'door-open', when: { 'doorStatus[MAIN].doorState': 'OPEN' }, minutes: 2, push: 'DOOR_IS_OPEN' },
    { id: 'express-freeze', when: { 'refrigeration.expressMode': true }, minutes: 60, set: { 'refrigeration.expressMode': false }, push: 'FROZEN_IS_COMPLETE' },
    { id: 'rapid-freeze', when: { 'refrigeration.rapidFreeze': true }, minutes: 60, set: { 'refrigeration.rapidFreeze': false }, push: 'FROZEN_IS_COMPLETE' },
    { id: 'express-fridge', when: { 'refrigeration.expressFridge': true }, minutes: 60, set: { 'refrigeration.expressFridge': false } },
  ],
  wear: [
    { id: 'water-filter', per: 'minute', limit: SIX_MONTHS, shows: [{ path: 'waterFilterInfo.usedTime', as: 'months' }], push: 'TIME_TO_CHANGE_WATER_FILTER' },
    {
      id: 'air-filter',
      when: { 'refrigeration.freshAirFilter': { not: 'OFF' } },
      per: 'minute',
      limit: SIX_MONTHS,
      push: 'TIME_TO_CHANGE_FILTER',
      then: { 'refrigeration.freshAirFilter': 'REPLACE' },
    },
  ],
  // Each compartment's setpoint, shown in °C under temperature and in both units under temperatureInUnits.
  links: (['FRIDGE', 'FREEZER'] as const).map((place) => ({
    [`temperature[${place}].targetTemperature`]: 'C',
    [`temperatureInUnits[${place}].targetTemperatureC`]: 'C',
    [`temperatureInUnits[${place}].targetTemperatureF`]: 'F',
  })),
  actions: { 'replace-filter': { summary: 'Fit new water and fresh-air filters', set: {}, resets: ['water-filter', 'air-filter'] } },
  recipes: {
    DOOR_IS_OPEN: [{ action: 'open-door' }],
    FROZEN_IS_COMPLETE: [{ command: { refrigeration: { expressMode: true } } }],
    TIME_TO_CHANGE_WATER_FILTER: [{ action: 'wear-out', args: { counter: 'water-filter' } }],
    TIME_TO_CHANGE_FILTER: [{ command: { refrigeration: { freshAirFilter: 'AUTO' } } }, { action: 'wear-out', args: { counter: 'air-filter' } }],
  },
};

/** Read-only to partners; its tap sterilises itself every few hours. */
export const WATER_PURIFIER: TypeBehaviour = {
  holds: [
    { id: 'sterilise', when: { 'runState.cockState': 'NORMAL' }, minutes: 240, set: { 'runState.cockState': 'CLEANING', 'runState.sterilizingState': 'ON' } },
    { id: 'sterilised', when: { 'runState.cockState': 'CLEANING' }, minutes: 15, set: { 'runState.cockState': 'NORMAL', 'runState.sterilizingState': 'OFF' } },
  ],
  recipes: {},
};
