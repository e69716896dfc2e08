/**
 * The log of a deployment job while it runs: lines in this node's memory, read by any number of followers (the
 * logs route); when the job ends, the whole text goes to the deployment's row and the followers' reads end.
 */
const MAX_LINES = 20_000;
const MAX_LINE_CHARS = 4000;

export class DeploymentLog {
  private readonly lines: string[] = [];
  private readonly waiting = new Set<() => void>();
  private dropped = 0;
  ended = false;

  constructor(
    /** The version's log from earlier jobs (a rollback or restart of a version appends to it). */
    readonly earlier: string,
    private readonly clock: () => Date,
  ) {}

  /** Adds a line, stamped with the time. */
  line(text: string): void {
    if (this.ended) return;
    if (this.lines.length >= MAX_LINES) {
      this.dropped += 1;
      return;
    }
    const cut = text.length > MAX_LINE_CHARS ? `${text.slice(0, MAX_LINE_CHARS)} …` : text;
    this.lines.push(`${this.clock().toISOString()} ${cut}`);
    this.wake();
  }

  /** Adds a program's output (split in lines, each prefixed). */
  output(prefix: string, text: string): void {
    for (const line of text.split('\n')) if (line.length > 0) this.line(`${prefix}${line}`);
  }

  end(): void {
    if (this.dropped > 0) this.lines.push(`… ${this.dropped} more lines were not kept`);
    this.ended = true;
    this.wake();
  }

  /** The whole text (what the row keeps). */
  text(): string {
    return this.earlier + this.lines.map((line) => `${line}\n`).join('');
  }

  /** The text from the start, then lines as they come (`follow`) until the log ends or `signal` aborts. */
  async *read(follow: boolean, signal: AbortSignal): AsyncGenerator<string> {
    if (this.earlier) yield this.earlier;
    let position = 0;
    for (;;) {
      if (position < this.lines.length) {
        const batch = this.lines.slice(position);
        position = this.lines.length;
        yield batch.map((line) => `${line}\n`).join('');
      }
      if (this.ended || !follow || signal.aborted) return;
      await new Promise<void>((resolve) => {
        const done = () => {
          this.waiting.delete(done);
          signal.removeEventListener('abort', done);
          resolve();
        };
        this.waiting.add(done);
        signal.addEventListener('abort', done, { once: true });
      });
    }
  }

  private wake(): void {
    for (const resolve of [...this.waiting]) resolve();
  }
}
