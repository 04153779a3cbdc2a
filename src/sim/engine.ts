/**
 * The one engine that interprets every type's behaviour rows (behaviour.ts) on one location of a
 * device: each simulated minute its timers, programme, holds, drifts, derived values and wear run
 * in that order. Pure apart from the draft Part and its Memory, which the caller owns.
 */
import type { Derived, Drift, Hold, Timer, TypeBehaviour, Wear, WearShow } from './behaviour.js';
import { type Part, roundTo } from './part.js';
import { countdown, perform, remaining, type StepContext, tickProgramme } from './programme.js';

const MINUTES_PER_MONTH = 30 * 24 * 60;

function fire(behaviour: TypeBehaviour, part: Part, timer: Timer, context: StepContext): void {
  if (timer.set) part.writeAll(timer.set);
  if (timer.verb && behaviour.programme) perform(behaviour.programme, part, timer.verb);
  if (timer.flag) part.write(timer.flag, 'UNSET');
  if (timer.push) context.pushes.push(timer.push);
}

function runTimers(behaviour: TypeBehaviour, part: Part, context: StepContext, minutes: number): void {
  const at = new Date(context.simTime);
  for (const timer of behaviour.timers ?? []) {
    if (!part.has(timer.hour) || !part.matches(timer.when)) continue;
    if (timer.kind === 'relative') {
      const set = remaining(part, timer.id, timer.hour, timer.minute) > 0;
      if (set && countdown(part, timer.id, timer.hour, timer.minute, minutes) === 0) fire(behaviour, part, timer, context);
      continue;
    }
    if (timer.flag && part.has(timer.flag) && part.read(timer.flag) !== 'SET') continue;
    // A profile that shows only the hour fires on the hour.
    const minute = timer.minute !== undefined && part.has(timer.minute) ? part.read(timer.minute) : 0;
    const due = part.read(timer.hour) === at.getUTCHours() && minute === at.getUTCMinutes();
    if (due) fire(behaviour, part, timer, context);
  }
}

/**
 * Holds notify once per episode: the count starts when the condition starts holding and the row
 * fires when it reaches `minutes`. `quiet` (a command being applied) leaves rows with a push for
 * the next minute, as a command's answer carries a status and no notification.
 */
function runHolds(holds: readonly Hold[], part: Part, context: StepContext, minutes: number, quiet = false): void {
  const { held, notified } = part.memory;
  for (const hold of holds) {
    const key = part.key(hold.id);
    if (!part.matches(hold.when)) {
      delete held[key];
      delete notified[key];
      continue;
    }
    held[key] = key in held ? (held[key] as number) + minutes : 0;
    if ((held[key] as number) < hold.minutes || notified[key] || (quiet && hold.push)) continue;
    notified[key] = true;
    if (hold.set) part.writeAll(hold.set);
    if (hold.push) context.pushes.push(hold.push);
  }
}

/** Holds that began to hold during this minute (by a later row's write) start counting now, not a minute late. */
function startHolds(holds: readonly Hold[], part: Part): void {
  for (const hold of holds) {
    const key = part.key(hold.id);
    if (!(key in part.memory.held) && part.matches(hold.when)) part.memory.held[key] = 0;
  }
}

function target(part: Part, drift: Drift): number | undefined {
  const value = typeof drift.toward === 'number' ? drift.toward : part.read(drift.toward);
  return typeof value === 'number' ? value : undefined;
}

/** The first row of each path whose condition holds and whose direction agrees moves it one minute's worth. */
function runDrifts(drifts: readonly Drift[], part: Part, minutes: number): void {
  const done = new Set<string>();
  for (const drift of drifts) {
    const shown = part.read(drift.path);
    if (done.has(drift.path) || typeof shown !== 'number' || !part.matches(drift.when)) continue;
    const key = part.key(`drift:${drift.path}`);
    const { exact } = part.memory;
    const current = exact[key] !== undefined && exact[`${key}#shown`] === shown ? exact[key] : shown;
    const goal = target(part, drift);
    if (goal === undefined) continue;
    const delta = goal - current;
    if ((drift.only === 'down' && delta > 0) || (drift.only === 'up' && delta < 0)) continue;
    done.add(drift.path);
    const next = current + Math.sign(delta) * Math.min(Math.abs(delta), drift.perMinute * minutes);
    part.write(drift.path, roundTo(next, drift.step));
    exact[key] = next;
    exact[`${key}#shown`] = part.readNumber(drift.path);
  }
}

/** Values that follow others: a sensor's reading in °F, a pollution grade. */
function runDerived(derived: readonly Derived[], part: Part): void {
  for (const row of derived) {
    const source = part.read(row.from);
    if (typeof source !== 'number') continue;
    if ('bands' in row) {
      const band = row.bands.find(([upTo]) => source <= upTo);
      if (band) part.write(row.path, band[1]);
    } else part.write(row.path, row.convert === 'CtoF' ? roundTo((source * 9) / 5 + 32, 1) : source);
  }
}

function limitOf(wear: Wear, part: Part): number {
  if (typeof wear.limit === 'number') return wear.limit;
  const hours = part.readNumber(wear.limit.path);
  return hours > 0 ? hours * 60 : wear.limit.fallback;
}

function shownAs(as: WearShow, used: number, limit: number): number | boolean {
  switch (as) {
    case 'hours':
      return Math.floor(used / 60);
    case 'months':
      return Math.floor(used / MINUTES_PER_MONTH);
    case 'remainPercent':
      return Math.max(0, Math.round(100 - (used / limit) * 100));
    case 'full':
      return used >= limit;
  }
}

/** A counter first seen takes its value from what the status shows (an adopted filter is as worn as it says). */
function usedFromStatus(wear: Wear, part: Part, limit: number): number {
  for (const { path, as } of wear.shows ?? []) {
    const value = part.read(path);
    if (typeof value === 'boolean' && as === 'full') return value ? limit : 0;
    if (typeof value !== 'number') continue;
    if (as === 'hours') return value * 60;
    if (as === 'months') return value * MINUTES_PER_MONTH;
    if (as === 'remainPercent') return ((100 - value) / 100) * limit;
  }
  return 0;
}

function runWear(wears: readonly Wear[], part: Part, context: StepContext, minutes: number): void {
  const { wear: used, notified } = part.memory;
  for (const wear of wears) {
    const key = part.key(`wear:${wear.id}`);
    const limit = limitOf(wear, part);
    const inUse = part.matches(wear.when);
    let value = used[key] ?? usedFromStatus(wear, part, limit);
    if (wear.per === 'minute' && inUse) value += minutes;
    if (wear.per === 'programme') value += context.finished;
    value = Math.min(value, limit);
    used[key] = value;
    for (const { path, as } of wear.shows ?? []) part.write(path, shownAs(as, value, limit));
    if (value < limit || !inUse) {
      // Out of use, a worn-out part reminds again the next time it is used.
      delete notified[key];
      continue;
    }
    if (wear.then) part.writeAll(wear.then);
    if (!notified[key] && wear.push) context.pushes.push(wear.push);
    notified[key] = true;
    // One that stopped the unit (a full bucket) reminds again whenever the unit is next found running.
    if (!part.matches(wear.when)) delete notified[key];
  }
}

/** Ages wear counters to one minute's (or one programme's) use before their limit; answers how many. */
export function wearOut(wears: readonly Wear[], part: Part, only: string | undefined): number {
  let count = 0;
  for (const wear of wears) {
    if (only !== undefined && wear.id !== only) continue;
    part.memory.wear[part.key(`wear:${wear.id}`)] = limitOf(wear, part) - 1;
    count++;
  }
  return count;
}

/** Renews the counters an action resets (a new filter, an emptied bucket). */
export function renew(wears: readonly Wear[], part: Part, ids: readonly string[]): void {
  for (const wear of wears) {
    if (!ids.includes(wear.id)) continue;
    const key = part.key(`wear:${wear.id}`);
    part.memory.wear[key] = 0;
    delete part.memory.notified[key];
    for (const { path, as } of wear.shows ?? []) part.write(path, shownAs(as, 0, limitOf(wear, part)));
  }
}

/** One simulated step of one location. */
export function advance(behaviour: TypeBehaviour, part: Part, context: StepContext, minutes: number): void {
  const counted = counting(behaviour.timers ?? [], part);
  runTimers(behaviour, part, context, minutes);
  if (behaviour.programme) tickProgramme(behaviour.programme, part, context, minutes);
  runHolds(behaviour.holds ?? [], part, context, minutes);
  runDrifts(behaviour.drifts ?? [], part, minutes);
  runDerived(behaviour.derived ?? [], part);
  runWear(behaviour.wear ?? [], part, context, minutes);
  cancelEnded(counted, part);
  startHolds(behaviour.holds ?? [], part);
}

/** What follows at once from a change made by an action: derived values and holds of zero minutes. */
export function settle(behaviour: TypeBehaviour, part: Part, context: StepContext): void {
  runDerived(behaviour.derived ?? [], part);
  runHolds(behaviour.holds ?? [], part, context, 0);
}

const differs = (part: Part, before: Part, path: string | undefined): boolean => path !== undefined && part.read(path) !== before.read(path);

/**
 * A timer a command sets is SET: a relative one unless it is zero, an absolute one unless it is at
 * -1 (how LG's clients clear one); one a command UNSETs is cleared. Its `armed` writes follow either.
 */
function armTimers(timers: readonly Timer[], part: Part, before: Part): void {
  for (const timer of timers) {
    const flagged = timer.flag !== undefined && part.has(timer.flag);
    if (!flagged && !timer.armed) continue;
    if (differs(part, before, timer.hour) || differs(part, before, timer.minute)) {
      const zero = part.readNumber(timer.hour) === 0 && (timer.minute === undefined || part.readNumber(timer.minute) === 0);
      const set = timer.kind === 'absolute' ? part.readNumber(timer.hour) >= 0 : !zero;
      if (flagged) part.write(timer.flag!, set ? 'SET' : 'UNSET');
      const follows = set ? timer.armed : timer.armed?.cleared;
      if (follows && part.matches(follows.when)) part.writeAll(follows.set);
    } else if (flagged && differs(part, before, timer.flag) && part.read(timer.flag!) === 'UNSET' && timer.kind === 'relative') {
      part.write(timer.hour, 0);
      if (timer.minute) part.write(timer.minute, 0);
    }
  }
}

/** The relative timers counting in `part` now: those a change may end. */
function counting(timers: readonly Timer[], part: Part): Timer[] {
  return timers.filter((timer) => timer.kind === 'relative' && part.has(timer.hour) && part.matches(timer.when));
}

/**
 * A relative timer counts while its condition holds; a change that ends the condition cancels it,
 * as an appliance switched off (by hand or by another timer) forgets its sleep and off timers, and
 * one switched on its start timer.
 */
function cancelEnded(counted: readonly Timer[], part: Part): void {
  for (const timer of counted) {
    if (part.matches(timer.when)) continue;
    part.write(timer.hour, 0);
    if (timer.minute) part.write(timer.minute, 0);
    if (timer.flag) part.write(timer.flag, 'UNSET');
  }
}

/** Whichever place of a linked quantity a command changed sets the others, converted to their unit. */
function runLinks(links: readonly Readonly<Record<string, 'C' | 'F'>>[], part: Part, before: Part): void {
  for (const link of links) {
    const changed = Object.keys(link).find((path) => differs(part, before, path));
    const value = changed === undefined ? undefined : part.read(changed);
    if (changed === undefined || typeof value !== 'number') continue;
    const celsius = link[changed] === 'F' ? ((value - 32) * 5) / 9 : value;
    for (const [path, unit] of Object.entries(link)) {
      if (path === changed) continue;
      // A range shows what it can: the half degree if its step allows, else the whole one.
      if (unit === 'F') part.write(path, roundTo((celsius * 9) / 5 + 32, 1));
      else if (!part.write(path, roundTo(celsius, 0.5))) part.write(path, roundTo(celsius, 1));
    }
  }
}

/**
 * What follows at once from a command (compared with the location `before` it): timers it set are
 * armed and those it overtook cancelled, linked values follow, and holds of zero minutes apply. Holds that would notify wait for
 * the next minute, as a command's answer carries a status, not a notification; derived values
 * follow measurements, which no command sets, so they wait too.
 */
export function settleCommand(behaviour: TypeBehaviour, part: Part, before: Part, context: StepContext): void {
  armTimers(behaviour.timers ?? [], part, before);
  cancelEnded(counting(behaviour.timers ?? [], before), part);
  runLinks(behaviour.links ?? [], part, before);
  runHolds(behaviour.holds ?? [], part, context, 0, true);
}
