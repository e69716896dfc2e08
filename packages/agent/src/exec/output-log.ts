/**
 * The newest bytes of one output stream of a kept exec, with the running count of every byte it ever wrote, so a
 * host that re-attaches says how much it has (an offset) and gets the rest that is still kept. Each chunk carries
 * a sequence number shared by a process's two logs, so a replay of both keeps the order the agent read them in.
 */

/** A kept piece of output: `offset` is where its first byte lies in the whole stream. */
export interface LoggedChunk {
  seq: number;
  offset: number;
  data: Buffer;
}

export class OutputLog {
  private chunks: LoggedChunk[] = [];
  /** Index of the oldest kept chunk (dropped ones are only compacted away now and then: no O(n) shift per chunk). */
  private head = 0;
  private keptBytes = 0;
  private totalBytes = 0;

  constructor(private readonly capacity: number) {}

  /** Bytes the stream wrote so far: the offset of its next byte. */
  get total(): number {
    return this.totalBytes;
  }

  /** Offset of the oldest byte still kept. */
  get oldest(): number {
    return this.totalBytes - this.keptBytes;
  }

  push(seq: number, data: Buffer): void {
    if (data.length === 0) return;
    this.chunks.push({ seq, offset: this.totalBytes, data });
    this.totalBytes += data.length;
    this.keptBytes += data.length;
    while (this.keptBytes > this.capacity) {
      const first = this.chunks[this.head] as LoggedChunk;
      const excess = this.keptBytes - this.capacity;
      if (first.data.length <= excess) {
        this.head++;
        this.keptBytes -= first.data.length;
      } else {
        this.chunks[this.head] = { seq: first.seq, offset: first.offset + excess, data: first.data.subarray(excess) };
        this.keptBytes -= excess;
      }
    }
    if (this.head > 1024 && this.head * 2 > this.chunks.length) {
      this.chunks = this.chunks.slice(this.head);
      this.head = 0;
    }
  }

  /** Where a replay for a reader that has `offset` bytes starts: there, or at the oldest byte kept; never past the end. */
  startFor(offset: number): number {
    return Math.min(Math.max(offset, this.oldest), this.totalBytes);
  }

  /** The kept chunks from byte `offset` on (the first one cut at it). */
  from(offset: number): LoggedChunk[] {
    const out: LoggedChunk[] = [];
    for (let index = this.head; index < this.chunks.length; index++) {
      const chunk = this.chunks[index] as LoggedChunk;
      const end = chunk.offset + chunk.data.length;
      if (end <= offset) continue;
      out.push(chunk.offset >= offset ? chunk : { seq: chunk.seq, offset, data: chunk.data.subarray(offset - chunk.offset) });
    }
    return out;
  }
}

/** Two streams' chunks merged in the order they were read (by sequence number). */
export function mergeBySeq(a: LoggedChunk[], b: LoggedChunk[]): Array<{ from: 'a' | 'b'; chunk: LoggedChunk }> {
  const merged: Array<{ from: 'a' | 'b'; chunk: LoggedChunk }> = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const left = a[i];
    const right = b[j];
    if (left && (!right || left.seq < right.seq)) {
      merged.push({ from: 'a', chunk: left });
      i++;
    } else if (right) {
      merged.push({ from: 'b', chunk: right });
      j++;
    }
  }
  return merged;
}
