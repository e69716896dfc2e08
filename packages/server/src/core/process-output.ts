/**
 * A background process's output as numbered events, kept for re-attaching: a reader says which event it saw last
 * and gets everything after it (what is still kept), then live events until the process ends. The newest
 * `limitBytes` of output are kept; a reader that asks for events already dropped is told how many bytes it missed.
 */

/** One piece of output, numbered from 1 in the order the agent read it. */
export interface OutputEvent {
  seq: number;
  stream: 'stdout' | 'stderr';
  data: Buffer;
}

/** What a reader gets: output events, a note of output it missed, and the end. */
export type OutputItem = { kind: 'output'; event: OutputEvent } | { kind: 'dropped'; events: number } | { kind: 'end' };

export class ProcessOutput {
  private readonly events: OutputEvent[] = [];
  private keptBytes = 0;
  private droppedBytes = 0;
  private lastSeq = 0;
  private ended = false;
  private readonly waiting = new Set<() => void>();

  constructor(private readonly limitBytes: number) {}

  get seq(): number {
    return this.lastSeq;
  }

  /** Bytes of output no longer kept (the oldest first). */
  get dropped(): number {
    return this.droppedBytes;
  }

  push(stream: 'stdout' | 'stderr', data: Buffer): void {
    if (this.ended || data.length === 0) return;
    this.events.push({ seq: ++this.lastSeq, stream, data });
    this.keptBytes += data.length;
    while (this.keptBytes > this.limitBytes && this.events.length > 1) {
      const oldest = this.events.shift()!;
      this.keptBytes -= oldest.data.length;
      this.droppedBytes += oldest.data.length;
    }
    this.wake();
  }

  /** No more output: readers get what is left, then the end. */
  end(): void {
    this.ended = true;
    this.wake();
  }

  /** The kept events after `afterSeq`, oldest first. */
  since(afterSeq: number): OutputEvent[] {
    const first = this.events.findIndex((event) => event.seq > afterSeq);
    return first === -1 ? [] : this.events.slice(first);
  }

  /**
   * Everything after event `afterSeq`: kept events, then live ones until the process ends (`follow`) or at once
   * (`follow: false`), then `end` when it ended. Stops (without `end`) when `signal` aborts.
   */
  async *read(afterSeq: number, options: { follow: boolean; signal: AbortSignal }): AsyncGenerator<OutputItem> {
    let position = afterSeq;
    const oldestKept = this.events[0]?.seq ?? this.lastSeq + 1;
    if (position < oldestKept - 1) {
      // Events between the reader's position and the oldest kept one are gone.
      const missedEvents = oldestKept - 1 - position;
      yield { kind: 'dropped', events: missedEvents };
      position = oldestKept - 1;
    }
    for (;;) {
      for (const event of this.since(position)) {
        position = event.seq;
        yield { kind: 'output', event };
      }
      if (this.ended) {
        yield { kind: 'end' };
        return;
      }
      if (!options.follow || options.signal.aborted) return;
      await new Promise<void>((resolve) => {
        const done = () => {
          this.waiting.delete(done);
          options.signal.removeEventListener('abort', done);
          resolve();
        };
        this.waiting.add(done);
        options.signal.addEventListener('abort', done, { once: true });
      });
      if (options.signal.aborted) return;
    }
  }

  private wake(): void {
    for (const resolve of [...this.waiting]) resolve();
  }
}
