/**
 * A build's log on its way to the store: lines are buffered and written in batches (one insert per batch, at
 * most every `flushMs`), so a chatty tool costs a few writes a second, not one per line. Lines are cut at
 * `maxLineChars` and a build keeps at most `maxLines` (then one line says the rest was dropped). The last lines
 * stay in memory for the error message of a failed step.
 */
export interface BuildLogOptions {
  /** Writes a batch (in order; never two at once). */
  write(lines: string[]): Promise<void>;
  /** Called after each batch is written (followers of the log wake up). */
  written(): void;
  flushMs?: number;
  maxLines?: number;
  maxLineChars?: number;
}

export class BuildLog {
  private buffer: string[] = [];
  private count = 0;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private readonly flushMs: number;
  private readonly maxLines: number;
  private readonly maxLineChars: number;
  /** The first write error (the build goes on; its log has a gap). */
  failure: Error | undefined;

  constructor(private readonly options: BuildLogOptions) {
    this.flushMs = options.flushMs ?? 250;
    this.maxLines = options.maxLines ?? 20_000;
    this.maxLineChars = options.maxLineChars ?? 4000;
  }

  line(text: string): void {
    this.count += 1;
    if (this.count > this.maxLines) {
      if (this.count === this.maxLines + 1) this.buffer.push(`… the log is limited to ${this.maxLines} lines: the rest of this build's output is not kept`);
      return;
    }
    this.buffer.push(text.length > this.maxLineChars ? `${text.slice(0, this.maxLineChars)} … (${text.length - this.maxLineChars} more characters)` : text);
    this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
  }

  /** Writes what is buffered; resolves once every line given so far is in the store. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.buffer;
    this.buffer = [];
    if (batch.length > 0) {
      this.writing = this.writing.then(() =>
        this.options.write(batch).then(
          () => this.options.written(),
          (error: Error) => {
            this.failure ??= error;
          },
        ),
      );
    }
    return this.writing;
  }
}
