/**
 * The Duplex one HTTP/2 server session runs on: bytes from the link are pushed into it, its writes go to the
 * link. When the session's host is gone it is "killed": later writes are dropped, so nothing of an old session
 * can follow the link-sync answer of the next one.
 *
 * Writes complete as soon as the link has queued them, on purpose. Node's HTTP/2 core stops reading its socket
 * while a write is in progress; if both ends do that while each waits for the other to read (bulk data both
 * ways: a tunnel, `cat` with a large stdin), the link deadlocks. Completing at once keeps the agent reading, so
 * the host's writes always drain. The link's queue stays bounded by the host's HTTP/2 flow-control windows:
 * the session emits no DATA beyond what the host has granted.
 */
import { Duplex } from 'node:stream';
import type { ByteLink } from './byte-link.ts';
import { GoawayWatch } from './goaway-watch.ts';

type WriteCallback = (error?: Error | null) => void;

/** Duplex between one HTTP/2 session and the link. */
export class SessionStream extends Duplex {
  private dead = false;
  private readonly goawayWatch: GoawayWatch;

  /** `onGoaway` runs when the session sends GOAWAY: it is ending, whether Node says so or not. */
  constructor(
    private readonly link: ByteLink,
    onGoaway: () => void,
  ) {
    super({ allowHalfOpen: false });
    this.goawayWatch = new GoawayWatch(onGoaway);
  }

  /** Feeds bytes from the host; applies backpressure to the link when the session lags. */
  deliver(chunk: Buffer): void {
    if (this.dead || this.destroyed) return;
    if (!this.push(chunk)) this.link.pause();
  }

  /** Stops all writes to the link and destroys the stream. */
  kill(): void {
    if (this.dead) return;
    this.dead = true;
    this.destroy();
  }

  override _read(): void {
    this.link.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: WriteCallback): void {
    this.forward(chunk);
    callback();
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, callback: WriteCallback): void {
    // HTTP/2 writes many small frames per turn (corked); one link write for all of them saves system calls.
    this.forward(chunks.length === 1 ? (chunks[0] as { chunk: Buffer }).chunk : Buffer.concat(chunks.map((entry) => entry.chunk)));
    callback();
  }

  override _final(callback: WriteCallback): void {
    callback();
  }

  private forward(chunk: Buffer): void {
    if (this.dead) return;
    // A failed link write ends the link itself (its `closed` event tears the session down).
    this.link.write(chunk);
    this.goawayWatch.observe(chunk);
  }
}
