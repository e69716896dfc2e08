/**
 * Follows the frame boundaries of the bytes an HTTP/2 server session writes, to notice when it sends GOAWAY.
 *
 * Why: when nghttp2 ends a session because of bad input (a new host's link-sync hello landing in a stale
 * session is exactly that), it sends GOAWAY and stops reading, but Node's server session neither emits an
 * event nor closes until its socket ends, and a virtio port never ends. Watching the output is the one
 * reliable signal that the session is over.
 */

const FRAME_HEADER_BYTES = 9;
const GOAWAY = 0x7;

/** Calls `onGoaway` once, when a GOAWAY frame header passes by. */
export class GoawayWatch {
  private header = Buffer.alloc(FRAME_HEADER_BYTES);
  private headerFilled = 0;
  private payloadLeft = 0;
  private seen = false;

  constructor(private readonly onGoaway: () => void) {}

  /** Feeds bytes the session wrote, in order. */
  observe(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length && !this.seen) {
      if (this.payloadLeft > 0) {
        const skipped = Math.min(this.payloadLeft, chunk.length - offset);
        this.payloadLeft -= skipped;
        offset += skipped;
        continue;
      }
      const copied = chunk.copy(this.header, this.headerFilled, offset, offset + FRAME_HEADER_BYTES - this.headerFilled);
      this.headerFilled += copied;
      offset += copied;
      if (this.headerFilled < FRAME_HEADER_BYTES) return;
      this.headerFilled = 0;
      this.payloadLeft = this.header.readUIntBE(0, 3);
      if (this.header.readUInt8(3) === GOAWAY) {
        this.seen = true;
        this.onGoaway();
      }
    }
  }
}
