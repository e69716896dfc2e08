/**
 * Fires a callback at each VM's deadline. Timers are re-armed in steps because setTimeout cannot wait
 * longer than 2^31-1 ms (24.8 days) and VM lifetimes go up to 30 days. Deadlines themselves are persisted
 * by the engine with each VM, so a restarted server re-schedules them.
 */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class DeadlineScheduler {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Calls `onDeadline` at `at` (at once if it has passed); replaces an earlier deadline of the same id. */
  schedule(id: string, at: Date, onDeadline: () => void): void {
    this.cancel(id);
    const arm = () => {
      const remaining = at.getTime() - this.now();
      if (remaining <= 0) {
        this.timers.delete(id);
        onDeadline();
        return;
      }
      const timer = setTimeout(arm, Math.min(remaining, MAX_TIMER_MS));
      timer.unref();
      this.timers.set(id, timer);
    };
    arm();
  }

  cancel(id: string): void {
    const timer = this.timers.get(id);
    if (timer) clearTimeout(timer);
    this.timers.delete(id);
  }

  close(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}
