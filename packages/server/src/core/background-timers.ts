/**
 * Periodic background work of a service (log flushes, retention, reconcile loops): the timers never keep the
 * process alive, `clear` stops them all, and a run that fails is reported to the app's `BackgroundFailures` under
 * its loop's name (app-workers.ts logs it and counts it in `sandboxd_background_failures_total`); the next run retries.
 */

/** Hears of a failed turn of a background loop: the loop's name (snake_case, a metric label) and the error. */
export type BackgroundFailureListener = (loop: string, error: unknown) => void;

/**
 * Where the background loops of one app report their failures (the core does not log: the app listens). One per
 * app, so that two apps of one process (tests) count only their own.
 */
export class BackgroundFailures {
  private readonly listeners: BackgroundFailureListener[] = [];

  on(listener: BackgroundFailureListener): void {
    this.listeners.push(listener);
  }

  report(loop: string, error: unknown): void {
    for (const listener of this.listeners) listener(loop, error);
  }
}

export class BackgroundTimers {
  private timers: NodeJS.Timeout[] = [];

  constructor(private readonly failures: BackgroundFailures) {}

  get running(): boolean {
    return this.timers.length > 0;
  }

  /** Runs `run` every `ms`; a rejection is reported as a failure of `loop`. */
  every(loop: string, ms: number, run: () => Promise<unknown>): void {
    const timer = setInterval(() => void run().catch((error: unknown) => this.failures.report(loop, error)), ms);
    timer.unref();
    this.timers.push(timer);
  }

  clear(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
  }
}
