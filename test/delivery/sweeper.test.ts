import { expect, it } from 'vitest';
import { startSweeper } from '../../src/delivery/sweeper.js';

it('stop() tells the run in progress to end through its signal, and awaits it', async () => {
  const steps: string[] = [];
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const sweeper = startSweeper(
    60_000,
    async (signal) => {
      started();
      // A long run, step by step, as a retention backlog is swept.
      while (!signal.aborted) await new Promise((resolve) => setTimeout(resolve, 5));
      steps.push('ended');
    },
    (error) => steps.push(`failed: ${String(error)}`),
  );
  await running;
  await sweeper.stop();
  expect(steps).toEqual(['ended']);
});
