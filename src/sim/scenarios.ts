/** Named scenarios (DESIGN D `POST /admin/sim/scenarios/{name}`): a user's appliances acting in sequence, as a household would. */

export interface ScenarioStep {
  /** The user's first virtual device of one of these types does it. */
  deviceTypes: readonly string[];
  /** A sim action (actions.ts) with its arguments. */
  action: string;
  args?: Readonly<Record<string, unknown>>;
  /** Waits until the previous step's device shows one of these run states; without it, runs at once. */
  after?: readonly string[];
}

export interface Scenario {
  summary: string;
  steps: readonly [ScenarioStep, ...ScenarioStep[]];
}

export const SCENARIOS: Readonly<Record<string, Scenario>> = {
  'laundry-day': {
    summary: 'The washer runs a cycle; when it has ended, the dryer runs one. Both raise their completion push.',
    steps: [
      { deviceTypes: ['DEVICE_WASHER', 'DEVICE_WASHTOWER_WASHER'], action: 'start' },
      { deviceTypes: ['DEVICE_DRYER', 'DEVICE_WASHTOWER_DRYER'], action: 'start', after: ['END'] },
    ],
  },
  dinner: {
    summary: 'The oven preheats, then bakes for 40 minutes; when it is done, the dish washer runs.',
    steps: [
      { deviceTypes: ['DEVICE_OVEN'], action: 'preheat' },
      { deviceTypes: ['DEVICE_OVEN'], action: 'start', args: { minutes: 40 }, after: ['PREHEATING_IS_DONE'] },
      { deviceTypes: ['DEVICE_DISH_WASHER'], action: 'start', after: ['DONE'] },
    ],
  },
  'cleaning-day': {
    summary: 'The robot cleaner cleans while the dust it raises sends the air purifier to work.',
    steps: [
      { deviceTypes: ['DEVICE_ROBOT_CLEANER'], action: 'start' },
      { deviceTypes: ['DEVICE_AIR_PURIFIER'], action: 'pollute' },
    ],
  },
};
