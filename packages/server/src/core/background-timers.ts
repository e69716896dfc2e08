/**
 * Periodic background work of a service (log flushes, retention, reconcile loops): each run's failure is
 * swallowed (the next run retries), the timers never keep the process alive, and `clear` stops them all.
 */
export class BackgroundTimers {
  private timers: NodeJS.Timeout[] = [];

  get running(): boolean {
    return this.timers.length > 0;
  }

  every(ms: number, run: () => Promise<unknown>): void {
    const timer = setInterval(() => void run().catch(() => undefined), ms);
    timer.unref();
    this.timers.push(timer);
  }

  clear(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
  }
}
