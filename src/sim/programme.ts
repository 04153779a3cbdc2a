/**
 * Programmes as the engine runs them: a started cycle walks its phases while its timer counts,
 * ends with its completion push, pauses, resumes and fails. The run state and the timer carry the
 * progress, so a programme adopted after a restart continues from its status.
 */
import { own } from '../catalog/values.js';
import type { PathText, Programme, Verb } from './behaviour.js';
import type { Part } from './part.js';

export const RUN_STATE = 'runState.currentState';

/** Timer paths LG uses on every programme appliance; a profile without one simply does not show it. */
const TIMER = {
  remainHour: 'timer.remainHour',
  remainMinute: 'timer.remainMinute',
  remainSecond: 'timer.remainSecond',
  totalHour: 'timer.totalHour',
  totalMinute: 'timer.totalMinute',
  runningHour: 'timer.runningHour',
  runningMinute: 'timer.runningMinute',
} as const;

/** Delay timers: a start waits until the first reaches zero, or until the second is the programme's length away. */
const DELAY_TO_START = { hour: 'timer.relativeHourToStart', minute: 'timer.relativeMinuteToStart' } as const;
const DELAY_TO_STOP = { hour: 'timer.relativeHourToStop', minute: 'timer.relativeMinuteToStop' } as const;
/**
 * Which delay a command set (`start` or `stop`). A delay value alone does not reserve: LG's
 * documented statuses show 3 on idle machines (the least their knob offers), not a pending reservation.
 */
const ARMED_DELAY = '$armedDelay';

/** What happened during a step that other rows react to. */
export interface StepContext {
  /** Simulated time, epoch milliseconds: absolute timers read its UTC hour and minute. */
  simTime: number;
  /** Push codes raised, in order; the device keeps those its profile lists. */
  pushes: string[];
  /** Programmes that finished (wear counted per programme reads it). */
  finished: number;
}

/** Writes the first of `states` the profile's run state allows; answers whether one was. */
function writeState(part: Part, states: readonly string[]): boolean {
  return states.some((state) => part.write(RUN_STATE, state));
}

function phases(programme: Programme, part: Part): (readonly [string, number])[] {
  return programme.phases.filter(([state]) => part.canShow(RUN_STATE, state));
}

export function isRunning(programme: Programme, part: Part): boolean {
  return phases(programme, part).some(([state]) => state === part.read(RUN_STATE));
}

function minutesAt(part: Part, hour: PathText, minute: PathText): number {
  return part.readNumber(hour) * 60 + part.readNumber(minute);
}

function show(part: Part, hour: PathText, minute: PathText, minutes: number): void {
  part.write(hour, Math.floor(minutes / 60));
  part.write(minute, minutes % 60);
}

/** A new programme's length: its course's, its set cook time (0 = untimed), or its phases' sum. */
function newLength(programme: Programme, part: Part): number {
  const sum = phases(programme, part).reduce((total, [, minutes]) => total + minutes, 0);
  const { length } = programme;
  if (!length) return sum;
  if ('course' in length) return own(length.minutes, String(part.read(length.course))) ?? sum;
  return minutesAt(part, length.hour, length.minute);
}

/** How far the running programme is, and how long it is, read from its timer. */
function progress(programme: Programme, part: Part): { elapsed: number; length: number } {
  if (programme.display === 'running') return { elapsed: minutesAt(part, TIMER.runningHour, TIMER.runningMinute), length: newLength(programme, part) };
  const remain = minutesAt(part, TIMER.remainHour, TIMER.remainMinute);
  const total = minutesAt(part, TIMER.totalHour, TIMER.totalMinute);
  const length = total >= remain && total > 0 ? total : Math.max(remain, newLength(programme, part));
  return { elapsed: length - remain, length };
}

/** The phase at `elapsed` minutes, the phases' shares stretched over the programme's length. */
function phaseAt(programme: Programme, part: Part, elapsed: number, length: number): string | undefined {
  const kept = phases(programme, part);
  const sum = kept.reduce((total, [, minutes]) => total + minutes, 0);
  let end = 0;
  for (const [state, minutes] of kept) {
    end += (minutes / sum) * length;
    if (elapsed < end) return state;
  }
  return kept.at(-1)?.[0];
}

/** Notes a delay timer a command set (`written`: the paths it wrote), so that the next START reserves. */
export function armDelay(part: Part, written: readonly PathText[]): void {
  for (const [which, delay] of [['start', DELAY_TO_START], ['stop', DELAY_TO_STOP]] as const) {
    const set = written.includes(delay.hour) || written.includes(delay.minute);
    if (set && minutesAt(part, delay.hour, delay.minute) > 0) part.write(ARMED_DELAY, which);
  }
}

function clearDelays(part: Part): void {
  part.write(ARMED_DELAY, undefined);
  for (const delay of [DELAY_TO_START, DELAY_TO_STOP]) {
    if (part.readNumber(delay.hour) > 0 || part.readNumber(delay.minute) > 0) show(part, delay.hour, delay.minute, 0);
  }
}

function begin(programme: Programme, part: Part, length: number): void {
  const first = phases(programme, part)[0];
  if (first) part.write(RUN_STATE, first[0]);
  clearDelays(part);
  if (programme.display === 'running') show(part, TIMER.runningHour, TIMER.runningMinute, 0);
  else {
    show(part, TIMER.remainHour, TIMER.remainMinute, length);
    show(part, TIMER.totalHour, TIMER.totalMinute, length);
    part.write(TIMER.remainSecond, 0);
  }
}

function start(programme: Programme, part: Part, minutes: number | undefined): void {
  if (part.read(RUN_STATE) === programme.paused) return resume(programme, part);
  const length = minutes ?? newLength(programme, part);
  const armed = part.read(ARMED_DELAY);
  const delay = armed === 'start' ? DELAY_TO_START : armed === 'stop' ? DELAY_TO_STOP : undefined;
  const delayed = delay !== undefined && minutesAt(part, delay.hour, delay.minute) > 0;
  if (delayed && programme.reserved !== undefined && part.write(RUN_STATE, programme.reserved)) {
    show(part, TIMER.remainHour, TIMER.remainMinute, length);
    show(part, TIMER.totalHour, TIMER.totalMinute, length);
    return;
  }
  begin(programme, part, length);
}

function resume(programme: Programme, part: Part): void {
  const { elapsed, length } = progress(programme, part);
  const phase = phaseAt(programme, part, elapsed, length);
  if (phase) part.write(RUN_STATE, phase);
}

/** Applies an operation command or panel button to the programme. */
export function perform(programme: Programme, part: Part, verb: Verb, minutes?: number): void {
  if (verb === 'start') return start(programme, part, minutes);
  if (verb === 'resume') return part.read(RUN_STATE) === programme.paused ? resume(programme, part) : undefined;
  if (verb === 'pause') {
    part.write(RUN_STATE, programme.paused);
    return;
  }
  const states = verb === 'stop' ? programme.idle : verb.state;
  const moved = writeState(part, states);
  // A programme that is stopped or switched off loses its time; one sent home (robot) keeps it.
  if (moved && programme.display === 'remain' && !isRunning(programme, part)) {
    show(part, TIMER.remainHour, TIMER.remainMinute, 0);
    part.write(TIMER.remainSecond, 0);
  }
  if (moved) clearDelays(part);
}

function end(programme: Programme, part: Part, context: StepContext): void {
  writeState(part, programme.ended);
  if (programme.display === 'remain') show(part, TIMER.remainHour, TIMER.remainMinute, 0);
  clearDelays(part);
  if (programme.count) part.writeAll({ [programme.count]: { add: 1 } });
  if (programme.done) context.pushes.push(programme.done);
  context.finished += 1;
}

/** The minute property of a timer when the profile has it: without one, a timer counts in hours. */
function minuteOf(part: Part, minute: PathText | undefined): PathText | undefined {
  return minute !== undefined && part.has(minute) ? minute : undefined;
}

function shownMinutes(part: Part, hour: PathText, minute: PathText | undefined): number {
  return part.readNumber(hour) * 60 + (minute ? part.readNumber(minute) : 0);
}

/**
 * Minutes left on an hour-and-minute timer. The precise value is remembered with what the status
 * showed of it, so a profile that shows only hours (or minutes in a short range) still counts
 * right, and a value set from outside since (a new command) starts it afresh.
 */
export function remaining(part: Part, id: string, hour: PathText, minute: PathText | undefined): number {
  const key = part.key(id);
  const { exact } = part.memory;
  const shown = shownMinutes(part, hour, minuteOf(part, minute));
  return exact[key] !== undefined && exact[`${key}#shown`] === shown ? exact[key] : shown;
}

/** Counts a timer down by `minutes`; answers the minutes left. */
export function countdown(part: Part, id: string, hour: PathText, minute: PathText | undefined, minutes: number): number {
  const left = Math.max(0, remaining(part, id, hour, minute) - minutes);
  const shownMinute = minuteOf(part, minute);
  // Without a minute property the hour shows what is left rounded up: 0 only when nothing is.
  part.write(hour, shownMinute ? Math.floor(left / 60) : Math.ceil(left / 60));
  if (shownMinute) part.write(shownMinute, left % 60);
  const key = part.key(id);
  part.memory.exact[key] = left;
  part.memory.exact[`${key}#shown`] = shownMinutes(part, hour, shownMinute);
  return left;
}

function tickReserved(programme: Programme, part: Part, minutes: number): void {
  const length = minutesAt(part, TIMER.remainHour, TIMER.remainMinute);
  // After a restart the armed delay is forgotten: the one with time left is it.
  const armed = part.read(ARMED_DELAY) ?? (remaining(part, 'delay-to-start', DELAY_TO_START.hour, DELAY_TO_START.minute) > 0 ? 'start' : 'stop');
  if (armed === 'start') {
    if (countdown(part, 'delay-to-start', DELAY_TO_START.hour, DELAY_TO_START.minute, minutes) === 0) begin(programme, part, length);
    return;
  }
  const toStop = remaining(part, 'delay-to-stop', DELAY_TO_STOP.hour, DELAY_TO_STOP.minute);
  if (toStop === 0 || countdown(part, 'delay-to-stop', DELAY_TO_STOP.hour, DELAY_TO_STOP.minute, minutes) <= length) begin(programme, part, length);
}

/** One step of a programme: a reservation counts down, a running programme advances and may end. */
export function tickProgramme(programme: Programme, part: Part, context: StepContext, minutes: number): void {
  if (programme.reserved !== undefined && part.read(RUN_STATE) === programme.reserved) return tickReserved(programme, part, minutes);
  if (!isRunning(programme, part)) return;
  const { elapsed, length } = progress(programme, part);
  // A remaining time of zero while running is an untimed programme (an oven cooking until stopped).
  if (programme.display === 'remain' && length - elapsed <= 0) return;
  const now = elapsed + minutes;
  if (now >= length) return end(programme, part, context);
  if (programme.display === 'running') show(part, TIMER.runningHour, TIMER.runningMinute, now);
  else show(part, TIMER.remainHour, TIMER.remainMinute, length - now);
  const phase = phaseAt(programme, part, now, length);
  if (phase) part.write(RUN_STATE, phase);
}

/**
 * Puts the device in its error state, showing `errorCode` (a profile may list none), and raises
 * `pushCode` (a model may have none); a reason when it cannot.
 */
export function raiseError(part: Part, context: StepContext, pushCode: string | undefined, errorCode: string | undefined): string | null {
  const state = part.read(RUN_STATE);
  if (state === 'ERROR') return 'the device is already in an error state';
  if (!part.write(RUN_STATE, 'ERROR')) return 'its run state has no ERROR';
  part.write('$beforeError', state);
  part.showError(errorCode);
  if (pushCode) context.pushes.push(pushCode);
  return null;
}

/** Clears the error: a programme that had time left waits paused (START resumes it), else the device rests idle. */
export function clearError(programme: Programme, part: Part): string | null {
  const state = part.read(RUN_STATE);
  if (state !== 'ERROR') return `the device is not in an error state (${RUN_STATE} is ${JSON.stringify(state)})`;
  const before = part.read('$beforeError');
  const wasRunning = phases(programme, part).some(([phase]) => phase === before) || before === programme.paused;
  const { elapsed, length } = progress(programme, part);
  const resumable = wasRunning && (programme.display === 'running' ? elapsed > 0 : length - elapsed > 0);
  if (!(resumable && part.write(RUN_STATE, programme.paused))) perform(programme, part, 'stop');
  part.write('$beforeError', undefined);
  part.showError(undefined);
  return null;
}
