/**
 * The grammar of appliance behaviour (STYLE habit 11): what a type does over time, as rows of data
 * that one engine (engine.ts, programme.ts) interprets. Rows name status properties by path and are
 * filtered by each device's own profile when they run: a condition on a property the profile lacks
 * never holds, a write to one is skipped, a push code it does not list is never raised.
 *
 * Paths: `resource.property`, `resource[entry].property` (an entry of a multi-location resource,
 * addressed by its locationName or unit), or `$name`, a value the simulation remembers that no
 * status shows (a write-only setting, a sandbox mode).
 */

export type PathText = string;

/** What a condition expects of a value: it, one of a list, a bound, or anything but it. */
export type Expect = string | number | boolean | readonly (string | number | boolean)[] | { atMost: number } | { atLeast: number } | { not: string | number | boolean };

/** Every path must hold a value meeting its expectation; a path the status lacks fails. */
export type Condition = Readonly<Record<PathText, Expect>>;

/** A value to write: a literal, or the current number plus `add`. */
export type Value = string | number | boolean | { add: number };

export type Writes = Readonly<Record<PathText, Value>>;

/** What an operation command (or a panel button) does to a programme. */
export type Verb = 'start' | 'stop' | 'pause' | 'resume' | { state: readonly string[] };

/**
 * A programme that runs through phases: a washer's cycle, an oven's cook, a robot's cleaning. Its
 * progress lives in the status (run state and timer), so a restarted simulator resumes it.
 */
export interface Programme {
  /** The write-only operation property whose values drive it. */
  operation?: string;
  /** What each operation value does; values without a row change nothing but are remembered. */
  commands: Readonly<Record<string, Verb>>;
  /** Run states in order, with their share of the programme in minutes; states the profile lacks are skipped. */
  phases: readonly (readonly [state: string, minutes: number])[];
  /** Where the length comes from instead of the phases' sum: the selected course, or a set cook time (0 = untimed). */
  length?: { course: PathText; minutes: Readonly<Record<string, number>> } | { hour: PathText; minute: PathText };
  /** Whether the timer shows time remaining (laundry, oven) or time running (robot cleaner). */
  display: 'remain' | 'running';
  /** The state it ends in (first the profile has). */
  ended: readonly string[];
  /** The state it rests in after STOP, or after an error is cleared with nothing to resume. */
  idle: readonly string[];
  paused: string;
  /** The state a start waits in when a command set relativeHourToStart/ToStop before (or with) START. */
  reserved?: string;
  /** States from which a panel `start` begins it. */
  startableIn: readonly string[];
  /** Raised when it ends. */
  done?: string;
  /** The error pushes of the type; `raise-error` raises the first unless told which. */
  failures: readonly string[];
  /** A counter that counts finished programmes. */
  count?: PathText;
}

/** A condition that, once it has held for `minutes`, writes and notifies once (until it stops holding). */
export interface Hold {
  id: string;
  when: Condition;
  minutes: number;
  set?: Writes;
  push?: string;
}

/** A measured value moving toward a target each minute; per path, the first row whose condition holds and whose direction agrees applies. */
export interface Drift {
  path: PathText;
  when?: Condition;
  toward: number | PathText;
  perMinute: number;
  /** Only cooling (down) or only heating (up): the value does not move the other way. */
  only?: 'down' | 'up';
  /** The granularity the status shows. */
  step: number;
}

/** A value that follows another: the same (or converted from °C), or a band the other falls in. */
export type Derived =
  | { path: PathText; from: PathText; convert?: 'CtoF' }
  | { path: PathText; from: PathText; bands: readonly (readonly [upTo: number, value: string | number])[] };

/** How a wear counter shows in the status. */
export type WearShow = 'hours' | 'months' | 'remainPercent' | 'full';

/** Something used up by use or by finished programmes: a filter, a bucket, rinse aid. */
export interface Wear {
  /** Also the `counter` argument of the `wear-out` action. */
  id: string;
  /** The part is in use while this holds (without it, always): minutes of use count, and a worn-out one notifies. */
  when?: Condition;
  per: 'minute' | 'programme';
  /** In minutes or programmes; or hours read from the status (a filter's lifetime) when positive. */
  limit: number | { path: PathText; fallback: number };
  shows?: readonly { path: PathText; as: WearShow }[];
  /** Raised when the limit is reached, and again when the part is next used after a pause (or after `then` stopped it). */
  push?: string;
  /** Written while worn out and in use: a full bucket stops the unit. */
  then?: Writes;
}

/**
 * A timer the partner sets: a relative one counts its hours and minutes down while `when` holds;
 * an absolute one fires at its hour and minute of simulated UTC time. Either fires once: it
 * writes `set`, raises `push`, and clears itself (flag UNSET, relative time 0).
 */
export interface Timer {
  id: string;
  kind: 'relative' | 'absolute';
  hour: PathText;
  minute?: PathText;
  /** The SET/UNSET flag beside it, when the profile has one: an absolute timer only fires while SET. */
  flag?: PathText;
  when?: Condition;
  set?: Writes;
  /** A programme verb it performs (a scheduled cleaning starts). */
  verb?: Verb;
  push?: string;
  /**
   * What a command that sets it (an absolute one to a time, not -1) writes while `when` holds, and
   * one that clears it while `cleared.when` holds: a robot given a start time waits for it.
   */
  armed?: { when: Condition; set: Writes; cleared: { when: Condition; set: Writes } };
}

/** A sandbox control that writes values (open a door, pollute the air); offered where the profile can show them. */
export interface ActionRow {
  summary: string;
  /** Refused (1102) unless this holds. */
  when?: Condition;
  set: Writes;
  /** Wear counters it renews (a new filter, an emptied bucket). */
  resets?: readonly string[];
  /** Sets this hour and minute to `args.inMinutes` (default 10) of simulated time from now: a reservation. */
  schedule?: { hour: PathText; minute: PathText };
}

/** How a sandbox user makes a push code happen: sim actions, commands and waits, then time. */
export interface RecipeStep {
  action?: string;
  args?: Readonly<Record<string, unknown>>;
  command?: Readonly<Record<string, unknown>>;
  /** Simulated minutes to let pass first. */
  minutes?: number;
}

/** The behaviour of one appliance type. Rows run in this order each simulated minute. */
export interface TypeBehaviour {
  timers?: readonly Timer[];
  programme?: Programme;
  holds?: readonly Hold[];
  drifts?: readonly Drift[];
  derived?: readonly Derived[];
  wear?: readonly Wear[];
  /** Write-only properties that set a readable one in the same resource (AC coolTargetTemperature → targetTemperature). */
  aliases?: Readonly<Record<string, string>>;
  /** One quantity shown in several places and units: whichever a command changes sets the others. */
  links?: readonly Readonly<Record<PathText, 'C' | 'F'>>[];
  /** Sandbox controls of this type beyond the common ones. */
  actions?: Readonly<Record<string, ActionRow>>;
  /** How each push code of the type comes about, for sandbox users and the fidelity tests. */
  recipes: Readonly<Record<string, readonly RecipeStep[]>>;
}
