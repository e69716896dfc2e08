/**
 * A small pool of ready, idle resources (restored VMs) per key (snapshot variant), refilled in the
 * background one at a time so that keeping the pool full never competes with the host's real work for
 * more than one restore at once. `take` never waits: an empty pool means the caller makes its own.
 */
export interface WarmPoolOptions<K, T> {
  /** How many idle items to keep per key. 0 disables the pool. */
  size: number;
  create: (key: K) => Promise<T>;
  destroy: (item: T) => Promise<void>;
  /** Reports a failed refill; the pool backs off and retries. */
  onError?: (key: K, error: unknown) => void;
}

const BACKOFF_MS = [1000, 5000, 30_000];

export class WarmPool<K extends string, T> {
  private readonly idle = new Map<K, T[]>();
  private readonly wanted = new Set<K>();
  private filling: Promise<void> | undefined;
  private closed = false;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: WarmPoolOptions<K, T>) {}

  /** Keeps the pool of `key` full from now on. */
  want(key: K): void {
    if (this.options.size <= 0 || this.closed) return;
    this.wanted.add(key);
    this.kick();
  }

  /** An idle item of `key`, or undefined; taking one schedules a refill. */
  take(key: K): T | undefined {
    const item = this.idle.get(key)?.shift();
    this.want(key);
    return item;
  }

  /** Idle items per key. */
  counts(): Record<string, number> {
    return Object.fromEntries([...this.idle].map(([k, items]) => [k, items.length]));
  }

  /** Destroys every idle item and stops refilling. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    await this.filling; // a fill under way destroys its item when it sees the pool closed
    const items = [...this.idle.values()].flat();
    this.idle.clear();
    await Promise.allSettled(items.map((item) => this.options.destroy(item)));
  }

  private nextKey(): K | undefined {
    for (const key of this.wanted) if ((this.idle.get(key)?.length ?? 0) < this.options.size) return key;
    return undefined;
  }

  private kick(): void {
    if (this.filling || this.closed || this.retryTimer) return;
    const key = this.nextKey();
    if (key === undefined) return;
    this.filling = this.options
      .create(key)
      .then(
        async (item) => {
          this.failures = 0;
          if (this.closed) return this.options.destroy(item);
          const list = this.idle.get(key) ?? [];
          list.push(item);
          this.idle.set(key, list);
        },
        (error: unknown) => {
          this.options.onError?.(key, error);
          const delay = BACKOFF_MS[Math.min(this.failures, BACKOFF_MS.length - 1)]!;
          this.failures += 1;
          this.retryTimer = setTimeout(() => {
            this.retryTimer = undefined;
            this.kick();
          }, delay);
          this.retryTimer.unref();
        },
      )
      .finally(() => {
        this.filling = undefined;
        this.kick();
      });
  }
}
