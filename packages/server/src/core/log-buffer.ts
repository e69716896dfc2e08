/**
 * Rows of an append-only log (egress attempts, vault requests) waiting for a background loop to write them: the path
 * that records a row never waits on the store, and a write the store refuses loses nothing (its batch goes back to
 * the front for the next turn). Bounded: past `maxRows` the oldest rows are dropped, so a store that stays down
 * cannot grow the process's memory without end.
 */
export class LogBuffer<T> {
  private readonly rows: T[] = [];

  constructor(private readonly limits: { batchRows: number; maxRows: number } = { batchRows: 500, maxRows: 50_000 }) {}

  get size(): number {
    return this.rows.length;
  }

  push(row: T): void {
    this.rows.push(row);
    this.trim();
  }

  /** Writes the oldest batch (nothing when empty); on failure puts it back and throws (the caller reports it). */
  async writeBatch(write: (batch: T[]) => Promise<unknown>): Promise<void> {
    if (this.rows.length === 0) return;
    const batch = this.rows.splice(0, this.limits.batchRows);
    try {
      await write(batch);
    } catch (error) {
      this.rows.unshift(...batch);
      this.trim();
      throw error;
    }
  }

  /** Writes batch after batch until none is left, or one fails (then as `writeBatch`). */
  async writeAll(write: (batch: T[]) => Promise<unknown>): Promise<void> {
    while (this.rows.length > 0) await this.writeBatch(write);
  }

  private trim(): void {
    if (this.rows.length > this.limits.maxRows) this.rows.splice(0, this.rows.length - this.limits.maxRows);
  }
}
