/**
 * A byte channel to the host: the virtio-serial port in a VM, a unix socket in tests. The agent runs link sync
 * and HTTP/2 sessions on top of it (`link-server.ts`); implementations only move bytes.
 */

/** What a link reports. */
export interface ByteLinkEvents {
  /** Bytes from the host. The buffer is the callee's to keep. */
  data(chunk: Buffer): void;
  /**
   * The host went away (EOF). A virtio port may later deliver bytes from a new host on the same link; a socket
   * link follows with `closed`.
   */
  hangup(): void;
  /** The link is finished for good (socket closed, port unplugged or unreadable). */
  closed(error?: Error): void;
}

/** A byte channel to one host at a time. */
export interface ByteLink {
  /** Human-readable name for diagnostics (device path, socket path). */
  readonly description: string;
  /** Starts reading; events flow until `closed`. Called once. */
  start(events: ByteLinkEvents): void;
  /**
   * Queues bytes for the host. No completion callback on purpose: the HTTP/2 session must never wait for the
   * link (see `session-stream.ts`); a failed write ends the link (`closed`).
   */
  write(chunk: Buffer): void;
  /**
   * Drops queued writes that have not reached the OS yet: after a hangup they belong to a host that is gone and
   * must not reach the next one. A write already in the kernel cannot be recalled; link sync copes with it.
   */
  discardPendingWrites(): void;
  /** Backpressure: stop delivering `data` until `resume`. */
  pause(): void;
  resume(): void;
  /** Ends the link; `closed` follows. */
  close(): void;
}
