/**
 * Group commit of device reports on PostgreSQL (issue 16). A report alone is a transaction of five
 * statements, each a round trip, and a commit's WAL flush: 2,035 reports/s through the store. Here
 * the reports asked for while one group's transaction is in flight wait, and the next group writes
 * them all in one transaction of as many statements. As SQLite's GroupCommit, every caller is
 * answered only once its group committed.
 *
 * One device's reports keep their order: a group takes a device's first waiting report only, and
 * leaves the others to the groups after it.
 */

/** What a group's write gives each of its calls, in their order. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

interface Waiting<Call, T> {
  call: Call;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

/** Enough to share a commit widely; few enough that a group's statements and locks stay small. */
const MAX_GROUP = 500;

export class ReportGroups<Call extends { deviceId: string }, T> {
  readonly #write: (calls: Call[]) => Promise<Array<Outcome<T>>>;
  #waiting: Array<Waiting<Call, T>> = [];
  #running: Promise<void> | undefined;

  /** `write` writes a group in one transaction; when it throws, every call of the group is refused with its error. */
  constructor(write: (calls: Call[]) => Promise<Array<Outcome<T>>>) {
    this.#write = write;
  }

  /** Resolves once the group that wrote `call` committed. */
  run(call: Call): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#waiting.push({ call, resolve, reject });
      this.#running ??= this.#writeAll();
    });
  }

  /** Resolves once nothing waits or is being written (the store closes after it). */
  async settled(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async #writeAll(): Promise<void> {
    // The first group takes what the rest of this turn asks for too.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.#waiting.length > 0) {
      const group = this.#next();
      let outcomes: Array<Outcome<T>>;
      try {
        outcomes = await this.#write(group.map((w) => w.call));
      } catch (error) {
        outcomes = group.map(() => ({ ok: false, error }));
      }
      group.forEach((w, i) => {
        const outcome = outcomes[i]!;
        if (outcome.ok) w.resolve(outcome.value);
        else w.reject(outcome.error);
      });
    }
    this.#running = undefined;
  }

  /** The next group: the first waiting call of each device, in the order they came. */
  #next(): Array<Waiting<Call, T>> {
    const devices = new Set<string>();
    const group: Array<Waiting<Call, T>> = [];
    const later: Array<Waiting<Call, T>> = [];
    for (const waiting of this.#waiting) {
      if (group.length < MAX_GROUP && !devices.has(waiting.call.deviceId)) {
        devices.add(waiting.call.deviceId);
        group.push(waiting);
      } else later.push(waiting);
    }
    this.#waiting = later;
    return group;
  }
}
