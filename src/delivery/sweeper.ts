/** A task run at once and then every `intervalMs`, never two runs at a time; `stop()` awaits the run in progress. */
export interface Sweeper {
  stop(): Promise<void>;
}

/**
 * Errors go to `failed`, and the next run happens as planned; a tick during a slow run is skipped.
 * `stop()` aborts the task's signal first, so that a long run (a retention backlog) ends at its next step.
 */
export function startSweeper(intervalMs: number, task: (signal: AbortSignal) => Promise<void>, failed: (error: unknown) => void): Sweeper {
  const stopping = new AbortController();
  let current: Promise<void> | undefined;
  const run = (): void => {
    current ??= task(stopping.signal)
      .catch(failed)
      .finally(() => {
        current = undefined;
      });
  };
  run();
  const timer = setInterval(run, intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      stopping.abort();
      await current;
    },
  };
}
