/** A task run at once and then every `intervalMs`, never two runs at a time; `stop()` awaits the run in progress. */
export interface Sweeper {
  stop(): Promise<void>;
}

/** Errors go to `failed`, and the next run happens as planned; a tick during a slow run is skipped. */
export function startSweeper(intervalMs: number, task: () => Promise<void>, failed: (error: unknown) => void): Sweeper {
  let current: Promise<void> | undefined;
  const run = (): void => {
    current ??= task()
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
      await current;
    },
  };
}
