/**
 * An async-iterable queue with a byte budget: when more than `highWaterBytes` wait unread, the producer is
 * told to pause (HTTP/2 flow control then holds the guest process back) and resumed once the reader catches up.
 */

/** A queue of events read with `for await`. */
export class EventQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private bytes = 0;
  private ended = false;
  private failure: Error | undefined;
  private wake: (() => void) | undefined;
  private iterating = false;

  constructor(
    private readonly sizeOf: (item: T) => number,
    private readonly highWaterBytes: number,
    private readonly pause: () => void,
    private readonly resume: () => void,
  ) {}

  /** Adds an event. */
  push(item: T): void {
    if (this.ended) return;
    this.items.push(item);
    this.bytes += this.sizeOf(item);
    if (this.bytes > this.highWaterBytes) this.pause();
    this.signal();
  }

  /** No more events; with `error`, iteration throws it after the queued events. */
  end(error?: Error): void {
    if (this.ended) return;
    this.ended = true;
    this.failure = error;
    this.signal();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    if (this.iterating) throw new Error('the output can be iterated only once');
    this.iterating = true;
    for (;;) {
      const item = this.items.shift();
      if (item !== undefined) {
        const before = this.bytes;
        this.bytes -= this.sizeOf(item);
        if (before > this.highWaterBytes && this.bytes <= this.highWaterBytes) this.resume();
        yield item;
        continue;
      }
      if (this.ended) {
        if (this.failure) throw this.failure;
        return;
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
