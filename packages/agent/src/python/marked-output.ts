/**
 * Splits a kernel's stdout (or stderr) pipe into per-run output, using the end marker the kernel writes after
 * each run (`\0sandboxd-end-<seq>\0`). Bytes that arrive between runs (a background thread printing) belong to
 * the next run, as in a notebook.
 */

/** Most output kept per run and pipe; the rest is dropped with a note. */
export const MAX_RUN_OUTPUT_BYTES = 16 * 1024 * 1024;

/** The end marker of run `seq`. */
export function endMarker(seq: number): Buffer {
  return Buffer.from(`\0sandboxd-end-${seq}\0`, 'latin1');
}

/** One pipe's output, cut at end markers. */
export class MarkedOutput {
  private run: Buffer[] = [];
  private runBytes = 0;
  private truncated = false;
  private carry: Buffer = Buffer.alloc(0);
  private marker: Buffer | undefined;
  private seen = false;
  private onSeen: (() => void) | undefined;
  /** Who gets the run's output as it arrives (a streamed run), besides what `finish` answers. */
  private listener: ((bytes: Buffer) => void) | undefined;
  // Bytes after this run's marker, received before finish(): the next run's output.
  private pendingNext: Buffer = Buffer.alloc(0);

  constructor(private readonly maxBytes = MAX_RUN_OUTPUT_BYTES) {}

  /** Feeds bytes from the pipe. */
  push(chunk: Buffer): void {
    const marker = this.marker;
    if (marker && this.seen) {
      this.pendingNext = Buffer.concat([this.pendingNext, chunk]);
      return;
    }
    if (!marker) {
      this.append(chunk);
      return;
    }
    const window = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    const index = window.indexOf(marker);
    if (index >= 0) {
      this.append(window.subarray(0, index));
      this.carry = Buffer.alloc(0);
      this.seen = true;
      // What follows the marker already belongs to the next run.
      this.pendingNext = Buffer.from(window.subarray(index + marker.length));
      this.onSeen?.();
      return;
    }
    // Hold back only a tail that may be the start of a marker cut by the pipe (it begins with NUL, which text
    // output rarely has): the rest is the run's, at once, for a streamed run's reader.
    const keep = window.length - markerPrefixAtEnd(window, marker);
    this.append(window.subarray(0, keep));
    this.carry = Buffer.from(window.subarray(keep));
  }

  /**
   * Starts watching for run `seq`'s marker. Output received since the last run counts for this one; `listener`
   * gets that at once, then each piece of the run's output as it arrives (what is kept, up to the limit).
   */
  begin(seq: number, listener?: (bytes: Buffer) => void): void {
    this.marker = endMarker(seq);
    this.seen = false;
    this.onSeen = undefined;
    this.listener = listener;
    for (const bytes of this.run) listener?.(bytes);
  }

  /**
   * Resolves with the run's output once its marker arrived, or after `timeoutMs` with what arrived so far
   * (user code may have closed or redirected the fd).
   */
  async finish(timeoutMs: number): Promise<string> {
    if (!this.seen) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        this.onSeen = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    this.onSeen = undefined;
    if (this.carry.length > 0) this.append(this.carry);
    this.listener = undefined;
    const text = Buffer.concat(this.run, this.runBytes).toString('utf8') + (this.truncated ? '\n[output truncated]\n' : '');
    this.run = [];
    this.runBytes = 0;
    this.truncated = false;
    this.carry = Buffer.alloc(0);
    this.marker = undefined;
    this.seen = false;
    const next = this.pendingNext;
    this.pendingNext = Buffer.alloc(0);
    if (next.length > 0) this.append(next);
    return text;
  }

  private append(bytes: Buffer): void {
    if (bytes.length === 0) return;
    const room = this.maxBytes - this.runBytes;
    if (room <= 0) {
      this.truncated = true;
      return;
    }
    const kept = bytes.length > room ? bytes.subarray(0, room) : bytes;
    if (kept.length < bytes.length) this.truncated = true;
    const copy = Buffer.from(kept);
    this.run.push(copy);
    this.runBytes += kept.length;
    this.listener?.(copy);
  }
}

/** The length of the longest end of `window` that is the beginning of `marker` (shorter than the marker). */
function markerPrefixAtEnd(window: Buffer, marker: Buffer): number {
  for (let length = Math.min(marker.length - 1, window.length); length > 0; length--) {
    if (window.subarray(window.length - length).equals(marker.subarray(0, length))) return length;
  }
  return 0;
}
