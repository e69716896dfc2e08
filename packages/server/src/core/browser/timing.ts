/** Durations as the browser's answers give them: seconds, to the millisecond. */
export function seconds(ms: number): number {
  return Math.round(ms) / 1000;
}

/** Seconds since `startedMs` (a `performance.now()` reading). */
export function secondsSince(startedMs: number): number {
  return seconds(performance.now() - startedMs);
}
