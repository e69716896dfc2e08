/**
 * A pool of ready, idle resources (restored VMs) per key (template and shape), refilled in the background one at
 * a time so that keeping it full never competes with the host's real work for more than one restore at once.
 * `take` never waits: an empty pool means the caller makes its own.
 *
 * How many it keeps per key follows demand: at least the floor the key was wanted with, and as many as were taken
 * within any minute of the last fifteen (a burst of 20 makes the pool hold 20 for the next one), up to `max`.
 * A refill starts a moment after the last take (a burst is refilled once it is over); refills above the floor
 * happen only while the host has room (`roomForMore`: no caller waiting for a restore,
 * memory above its floor), so growing the pool never slows the requests it is meant to serve; items beyond what
 * demand still asks for are destroyed once the burst has aged out of the window.
 */
export interface WarmPoolOptions<K, T> {
  /** Idle items kept per wanted key whatever the demand (a key's own `want` size wins). 0 disables the pool. */
  size: number;
  /** The most idle items per key demand may grow it to (never below a key's floor). Default: `size`. */
  max?: number;
  create: (key: K) => Promise<T>;
  destroy: (item: T) => Promise<void>;
  /** Reports a failed refill; the pool backs off and retries. */
  onError?: (key: K, error: unknown) => void;
  /** Whether one more item above a key's floor may be made now; checked before each such refill. Default: yes. */
  roomForMore?: () => boolean;
  /** How long after the last take the pool starts refilling (ms; default `REFILL_AFTER_TAKE_MS`). */
  refillAfterTakeMs?: number;
  /** The clock, for tests. */
  now?: () => number;
}

const BACKOFF_MS = [1000, 5000, 30_000];
/** How far back takes count as demand. */
export const DEMAND_WINDOW_MS = 15 * 60_000;
/** A burst: the takes within this span of one another. */
export const BURST_SPAN_MS = 60_000;
/** How often a pool above its floor looks again for room to grow, and for items demand no longer asks for. */
const REBALANCE_MS = 2000;
/**
 * A refill starts this long after the last take, not at once: the VMs just taken are starting their first work
 * (identity, a first execute), and a burst takes many within a moment; a restore beside them slows every one.
 */
export const REFILL_AFTER_TAKE_MS = 1000;

export class WarmPool<K extends string, T> {
  private readonly idle = new Map<K, T[]>();
  /** Keys kept full, with each one's floor. */
  private readonly wanted = new Map<K, number>();
  /** When items of each key were taken, oldest first, within the demand window. */
  private readonly takes = new Map<K, number[]>();
  private filling: Promise<void> | undefined;
  private closed = false;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private rebalanceTimer: NodeJS.Timeout | undefined;
  private takeTimer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(private readonly options: WarmPoolOptions<K, T>) {
    this.now = options.now ?? Date.now;
  }

  /** Keeps at least `size` (default the pool's size, or what an earlier call set for `key`) idle items of `key` from now on. */
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

  /** An idle item of `key`, or undefined; the take counts as demand, and schedules a refill (of a key that is wanted). */
  take(key: K): T | undefined {
    const item = this.idle.get(key)?.shift();
    if (this.wanted.has(key)) {
      const takes = this.takes.get(key) ?? [];
      takes.push(this.now());
      this.takes.set(key, takes);
      // Each take pushes the refill back: a burst is refilled once it is over.
      clearTimeout(this.takeTimer);
      this.takeTimer = setTimeout(() => {
        this.takeTimer = undefined;
        this.kick();
      }, this.options.refillAfterTakeMs ?? REFILL_AFTER_TAKE_MS);
      this.takeTimer.unref();
    }
    return item;
  }

  /** Idle items per key. */
  counts(): Record<string, number> {
    return Object.fromEntries([...this.idle].map(([k, items]) => [k, items.length]));
  }

  /** How many idle items of `key` the pool aims to hold now: its floor, or recent demand up to the ceiling. */
  target(key: K): number {
    const floor = this.wanted.get(key);
    if (floor === undefined) return 0;
    const ceiling = Math.max(this.options.max ?? this.options.size, floor);
    return Math.min(ceiling, Math.max(floor, this.peakDemand(key)));
  }

  /** Destroys every idle item and stops refilling. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.rebalanceTimer);
    clearTimeout(this.takeTimer);
    await this.filling; // a fill under way destroys its item when it sees the pool closed
    const items = [...this.idle.values()].flat();
    this.idle.clear();
    await Promise.allSettled(items.map((item) => this.options.destroy(item)));
  }

  /** The most takes of `key` within one burst span, over the demand window (older takes are dropped here). */
  private peakDemand(key: K): number {
    const takes = this.takes.get(key);
    if (!takes) return 0;
    const since = this.now() - DEMAND_WINDOW_MS;
    while (takes.length > 0 && takes[0]! < since) takes.shift();
    if (takes.length === 0) {
      this.takes.delete(key);
      return 0;
    }
    let peak = 0;
    for (let first = 0, last = 0; last < takes.length; last++) {
      while (takes[last]! - takes[first]! > BURST_SPAN_MS) first++;
      peak = Math.max(peak, last - first + 1);
    }
    return peak;
  }

  /** The next key to refill: one below its floor first, then one below its demand when the host has room. */
  private nextKey(): { key: K | undefined; waitingForRoom: boolean } {
    let belowDemand: K | undefined;
    for (const key of this.wanted.keys()) {
      const count = this.idle.get(key)?.length ?? 0;
      if (count < this.wanted.get(key)!) return { key, waitingForRoom: false };
      if (belowDemand === undefined && count < this.target(key)) belowDemand = key;
    }
    if (belowDemand === undefined) return { key: undefined, waitingForRoom: false };
    return (this.options.roomForMore?.() ?? true) ? { key: belowDemand, waitingForRoom: false } : { key: undefined, waitingForRoom: true };
  }

  /** Destroys idle items beyond what their key's demand still asks for; true while some key stays above its floor. */
  private trim(): boolean {
    let aboveFloor = false;
    for (const [key, items] of this.idle) {
      const target = this.target(key);
      const extra = items.splice(target);
      for (const item of extra) void this.options.destroy(item).catch(() => undefined);
      if (items.length > (this.wanted.get(key) ?? 0) || target > (this.wanted.get(key) ?? 0)) aboveFloor = true;
    }
    return aboveFloor;
  }

  private kick(): void {
    if (this.filling || this.closed || this.retryTimer || this.takeTimer) return;
    const demanding = this.trim();
    const { key, waitingForRoom } = this.nextKey();
    // Look again later: to grow once the host has room, or to shrink once the burst has aged out.
    if (key === undefined && (waitingForRoom || demanding)) this.rebalanceLater();
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

  private rebalanceLater(): void {
    if (this.rebalanceTimer || this.closed) return;
    this.rebalanceTimer = setTimeout(() => {
      this.rebalanceTimer = undefined;
      this.kick();
    }, REBALANCE_MS);
    this.rebalanceTimer.unref();
  }
}
