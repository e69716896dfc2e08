/** The last N bytes of a terminal's output, kept as the chunks that arrived (no copy until asked for). */
export class Scrollback {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly capacity: number) {}

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > this.capacity) {
      const first = this.chunks[0] as Buffer;
      const excess = this.size - this.capacity;
      if (first.length <= excess) {
        this.chunks.shift();
        this.size -= first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.size -= excess;
      }
    }
  }

  /** Everything kept, oldest first. */
  contents(): Buffer {
    const joined = Buffer.concat(this.chunks, this.size);
    this.chunks = joined.length > 0 ? [joined] : [];
    return joined;
  }
}
