/** Washers, dryers, stylers and dish washers: cycles that run through their phases and finish with a push. */
import type { RecipeStep, TypeBehaviour } from '../behaviour.js';
import { cycle } from './common.js';

const start: RecipeStep = { action: 'start' };
const fail = (pushCode: string): readonly RecipeStep[] => [start, { action: 'raise-error', args: { pushCode } }];

export const WASHER: TypeBehaviour = {
  programme: cycle('washerOperationMode', [['DETECTING', 3], ['RUNNING', 27], ['RINSING', 12], ['SPINNING', 8]], 'WASHING_IS_COMPLETE', ['ERROR_DURING_WASHING'], {
    count: 'cycle.cycleCount',
  }),
  recipes: { WASHING_IS_COMPLETE: [start], ERROR_DURING_WASHING: fail('ERROR_DURING_WASHING') },
};

export const DRYER: TypeBehaviour = {
  // LG's dryers name their failure DRYING_FAILED; the washtower capture says ERROR_DURING_DRYING.
  programme: cycle('dryerOperationMode', [['DETECTING', 2], ['RUNNING', 48], ['COOLING', 10]], 'DRYING_IS_COMPLETE', ['DRYING_FAILED', 'ERROR_DURING_DRYING']),
  recipes: { DRYING_IS_COMPLETE: [start], DRYING_FAILED: fail('DRYING_FAILED'), ERROR_DURING_DRYING: fail('ERROR_DURING_DRYING') },
};

export const STYLER: TypeBehaviour = {
  programme: cycle('stylerOperationMode', [['PREHEAT', 4], ['STEAM', 12], ['RUNNING', 16], ['DRYING', 10], ['COOLING', 6]], 'STYLING_IS_COMPLETE', ['ERROR_HAS_OCCURRED']),
  recipes: { STYLING_IS_COMPLETE: [start], ERROR_HAS_OCCURRED: fail('ERROR_HAS_OCCURRED') },
};

const WASHING = ['RUNNING', 'RINSING', 'DRYING'];

export const DISH_WASHER: TypeBehaviour = {
  programme: cycle('dishWasherOperationMode', [['RUNNING', 60], ['RINSING', 30], ['DRYING', 30]], 'CLEANING_IS_COMPLETE', ['ERROR_DURING_CLEANING', 'WATER_LEAK_HAS_OCCURRED'], {
    length: {
      course: 'dishWashingCourse.currentDishWashingCourse',
      minutes: { AUTO: 120, NORMAL: 120, HEAVY: 150, DELICATE: 100, TURBO: 60, EXPRESS: 30, RINSE: 15, REFRESH: 25, MACHINE_CLEAN: 90, DOWNLOAD_CYCLE: 120 },
    },
  }),
  holds: [
    // Opening the door interrupts the wash; START (remote or at the appliance) continues it.
    { id: 'door-pauses', when: { 'doorStatus.doorState': 'OPEN', 'runState.currentState': WASHING }, minutes: 0, set: { 'runState.currentState': 'PAUSE' } },
  ],
  wear: [
    { id: 'rinse-aid', per: 'programme', limit: 5, shows: [{ path: 'dishWashingStatus.rinseRefill', as: 'full' }], push: 'RINSE_IS_NOT_ENOUGH' },
    { id: 'salt', per: 'programme', limit: 8, push: 'SALT_REFILL_IS_NEEDED' },
  ],
  actions: {
    'refill-rinse': { summary: 'Refill the rinse aid', set: {}, resets: ['rinse-aid'] },
    'refill-salt': { summary: 'Refill the softener salt', set: {}, resets: ['salt'] },
  },
  recipes: {
    CLEANING_IS_COMPLETE: [start],
    ERROR_DURING_CLEANING: fail('ERROR_DURING_CLEANING'),
    WATER_LEAK_HAS_OCCURRED: fail('WATER_LEAK_HAS_OCCURRED'),
    RINSE_IS_NOT_ENOUGH: [{ action: 'wear-out', args: { counter: 'rinse-aid' } }, start],
    SALT_REFILL_IS_NEEDED: [{ action: 'wear-out', args: { counter: 'salt' } }, start],
  },
};
