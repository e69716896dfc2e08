/**
 * At most `limit` tasks at once. `add` waits for a free place, so a producer that reads a many-GiB file chunk by
 * chunk holds at most `limit` chunks in memory. The first failure is kept: later `add`s and `drain` throw it, and
 * `settle` waits for whatever still runs (so a caller that fails cleans up only after its tasks stopped).
 */
export class TaskWindow {
  readonly #running = new Set<Promise<void>>();
  #failure: { error: unknown } | null = null;

  constructor(readonly limit: number) {}

  /** Starts `task` once fewer than `limit` run; throws the first failure of an earlier task instead. */
  async add(task: () => Promise<void>): Promise<void> {
    this.#throwIfFailed();
    while (this.#running.size >= this.limit) {
      await Promise.race(this.#running);
      this.#throwIfFailed();
    }
    const running: Promise<void> = task()
      .catch((error: unknown) => {
        this.#failure ??= { error };
      })
      .finally(() => this.#running.delete(running));
    this.#running.add(running);
  }

  /** Waits for every task; throws the first failure. */
  async drain(): Promise<void> {
    await this.settle();
    this.#throwIfFailed();
  }

  /** Waits for every task, failed or not. */
  async settle(): Promise<void> {
    while (this.#running.size > 0) await Promise.race(this.#running);
  }

  #throwIfFailed(): void {
    if (this.#failure) throw this.#failure.error;
  }
}
