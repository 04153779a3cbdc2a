/** Robot cleaners: cleaning drains the battery, ends at the dock, and a reservation or home guard runs on its own. */
import type { TypeBehaviour } from '../behaviour.js';

const STATE = 'runState.currentState';
const MOVING = ['WORKING', 'MACROSECTOR', 'HOMING'];
const DOCKED = ['CHARGING', 'STANDBY', 'SLEEP'];

export const ROBOT_CLEANER: TypeBehaviour = {
  timers: [
    {
      id: 'scheduled-cleaning',
      kind: 'absolute',
      hour: 'timer.absoluteHourToStart',
      minute: 'timer.absoluteMinuteToStart',
      when: { [STATE]: 'RESERVATION' },
      verb: 'start',
      push: 'SCHEDULED_CLEANING_STARTS',
      // LG's setAbsoluteTimeToStart: a docked robot waits for the time; -1 takes the reservation back.
      armed: { when: { [STATE]: DOCKED }, set: { [STATE]: 'RESERVATION' }, cleared: { when: { [STATE]: 'RESERVATION' }, set: { [STATE]: 'CHARGING' } } },
    },
  ],
  programme: {
    operation: 'cleanOperationMode',
    commands: { START: 'start', RESUME: 'resume', PAUSE: 'pause', HOMING: { state: ['HOMING'] }, WAKE_UP: { state: ['STANDBY'] } },
    phases: [['WORKING', 45]],
    // A robot shows how long it has been cleaning; the cleaning ends by driving home.
    display: 'running',
    ended: ['HOMING'],
    idle: ['STANDBY'],
    paused: 'PAUSE',
    startableIn: ['CHARGING', 'STANDBY', 'PAUSE', 'HOMING', 'SLEEP', 'RESERVATION'],
    done: 'CLEANING_IS_COMPLETED',
    failures: ['CLEANING_IS_FAILED', 'NEED_TO_CHECK_LOCATION'],
  },
  holds: [
    { id: 'low-battery', when: { [STATE]: 'WORKING', 'battery.percent': { atMost: 15 } }, minutes: 1, set: { [STATE]: 'HOMING' } },
    { id: 'docked', when: { [STATE]: 'HOMING' }, minutes: 3, set: { [STATE]: 'CHARGING' } },
    { id: 'dozes', when: { [STATE]: 'STANDBY' }, minutes: 60, set: { [STATE]: 'SLEEP' } },
    { id: 'motion', when: { $homeGuard: 'ON' }, minutes: 5, push: 'MOTION_IS_DETECTED' },
    { id: 'guard-ends', when: { $homeGuard: 'ON' }, minutes: 20, set: { $homeGuard: 'OFF', [STATE]: 'HOMING' }, push: 'HOMEGUARD_IS_STOPPED' },
  ],
  drifts: [
    { path: 'battery.percent', when: { [STATE]: MOVING }, toward: 0, perMinute: 1, step: 1 },
    { path: 'battery.percent', when: { [STATE]: 'CHARGING' }, toward: 100, perMinute: 2, step: 1 },
  ],
  derived: [{ path: 'battery.level', from: 'battery.percent', bands: [[4, 'MOVELESS'], [15, 'DOCK_LEVEL'], [30, 'LOW'], [60, 'MID'], [90, 'HIGH'], [100, 'FULL']] }],
  actions: {
    'schedule-cleaning': {
      summary: 'Reserve a cleaning `args.inMinutes` (default 10) simulated minutes from now',
      when: { [STATE]: ['CHARGING', 'STANDBY'] },
      set: { [STATE]: 'RESERVATION' },
      schedule: { hour: 'timer.absoluteHourToStart', minute: 'timer.absoluteMinuteToStart' },
    },
    'home-guard': {
      summary: 'Patrol as a home guard for 20 minutes (it sees motion after 5)',
      when: { [STATE]: ['CHARGING', 'STANDBY'] },
      set: { $homeGuard: 'ON', [STATE]: 'WORKING', 'timer.runningHour': 0, 'timer.runningMinute': 0 },
    },
  },
  // A robot fresh from the catalog reports an empty battery: it charges before it cleans to the end.
  recipes: {
    CLEANING_IS_COMPLETED: [{ minutes: 50 }, { action: 'start' }],
    SCHEDULED_CLEANING_STARTS: [{ action: 'schedule-cleaning', args: { inMinutes: 5 } }],
    MOTION_IS_DETECTED: [{ action: 'home-guard' }],
    HOMEGUARD_IS_STOPPED: [{ action: 'home-guard' }],
    CLEANING_IS_FAILED: [{ action: 'start' }, { action: 'raise-error', args: { pushCode: 'CLEANING_IS_FAILED' } }],
    NEED_TO_CHECK_LOCATION: [{ action: 'start' }, { action: 'raise-error', args: { pushCode: 'NEED_TO_CHECK_LOCATION' } }],
  },
};
