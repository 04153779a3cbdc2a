/**
 * The simulator's speeds, in simulated minutes per real minute. Below the minimum a simulated
 * minute would outlast Node's longest timer (2^31 - 1 ms), which then fires after 1 ms instead.
 */
export const MIN_TIME_SCALE = 0.01;
export const MAX_TIME_SCALE = 10_000;

/** Whether `scale` is a speed the simulator runs at. */
export function isTimeScale(scale: unknown): scale is number {
  return typeof scale === 'number' && Number.isFinite(scale) && scale >= MIN_TIME_SCALE && scale <= MAX_TIME_SCALE;
}

/** What a refused speed is told: the range, with 1 as real time. */
export const TIME_SCALE_RANGE = `a number from ${MIN_TIME_SCALE} to ${MAX_TIME_SCALE} (1 = real time)`;
