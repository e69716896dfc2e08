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
  /** Keys kept full, with how many idle items each keeps. */
  private readonly wanted = new Map<K, number>();
  private filling: Promise<void> | undefined;
  private closed = false;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: WarmPoolOptions<K, T>) {}

  /** Keeps `size` (default the pool's size, or what an earlier call set for `key`) idle items of `key` from now on. */
  want(key: K, size?: number): void {
    if (this.closed) return;
    const wanted = size ?? this.wanted.get(key) ?? this.options.size;
    if (wanted <= 0) {
      this.wanted.delete(key);
      return;
    }
    this.wanted.set(key, wanted);
    this.kick();
  }

  /** An idle item of `key`, or undefined; taking one schedules a refill (of a key that is wanted). */
  take(key: K): T | undefined {
    const item = this.idle.get(key)?.shift();
    if (this.wanted.has(key)) this.kick();
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
    for (const [key, size] of this.wanted) if ((this.idle.get(key)?.length ?? 0) < size) return key;
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
