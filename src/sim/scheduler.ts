/** When the simulator's next minute comes. Injected: production waits on timers, tests advance a manual scheduler. */
export interface Scheduler {
  /** Runs `task` once after `delayMs` real milliseconds, unless the returned function cancels it first. */
  after(delayMs: number, task: () => Promise<void>): () => void;
}

export const timerScheduler: Scheduler = {
  after(delayMs, task) {
    const timer = setTimeout(() => void task(), delayMs);
    // A simulation alone does not keep the process alive: the server (or a CLI command) decides that.
    timer.unref();
    return () => clearTimeout(timer);
  },
};
