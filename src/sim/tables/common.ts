/** Rows several types share: the programme verbs of a laundry-style cycle and the sandbox controls every door and switch has. */
import type { ActionRow, Programme, Verb } from '../behaviour.js';

/** What a cycle appliance's operation values do (washer, dryer, styler, dish washer). */
const CYCLE_COMMANDS: Readonly<Record<string, Verb>> = {
  START: 'start',
  STOP: 'stop',
  CANCEL: 'stop',
  POWER_OFF: { state: ['POWER_OFF'] },
  POWER_ON: { state: ['INITIAL'] },
  WAKE_UP: { state: ['INITIAL'] },
};

/** A laundry-style cycle: remaining time counts down, a delay timer reserves the start. */
export function cycle(operation: string, phases: Programme['phases'], done: string, failures: readonly string[], extra: Partial<Programme> = {}): Programme {
  return {
    operation,
    commands: CYCLE_COMMANDS,
    phases,
    display: 'remain',
    ended: ['END', 'COMPLETE'],
    idle: ['INITIAL'],
    paused: 'PAUSE',
    reserved: 'RESERVED',
    startableIn: ['INITIAL', 'END', 'COMPLETE', 'CANCEL', 'POWER_OFF', 'SLEEP', 'PAUSE'],
    done,
    failures,
    ...extra,
  };
}

/** Controls that apply to any device whose profile has their properties. */
export const COMMON_ACTIONS: Readonly<Record<string, ActionRow>> = {
  'open-door': { summary: 'Open the door (and leave it open)', set: { 'doorStatus[MAIN].doorState': 'OPEN', 'doorStatus.doorState': 'OPEN' } },
  'close-door': { summary: 'Close the door', set: { 'doorStatus[MAIN].doorState': 'CLOSE', 'doorStatus.doorState': 'CLOSE' } },
  'remote-control-on': { summary: 'Switch Remote Start on at the appliance', set: { 'remoteControlEnable.remoteControlEnabled': true } },
  'remote-control-off': { summary: 'Switch Remote Start off at the appliance', set: { 'remoteControlEnable.remoteControlEnabled': false } },
};
