/**
 * A {@link ByteLink} over a connected stream socket (the unix transport used in tests and development). A socket
 * carries exactly one host: its end is a hangup followed by `closed`.
 */
import type { Duplex } from 'node:stream';
import type { ByteLink, ByteLinkEvents } from './byte-link.ts';

/** Wraps one accepted connection. */
export class SocketLink implements ByteLink {
  private error: Error | undefined;

  constructor(
    private readonly socket: Duplex,
    readonly description: string,
  ) {}

  start(events: ByteLinkEvents): void {
    this.socket.on('data', (chunk: Buffer) => events.data(chunk));
    this.socket.on('end', () => {
      events.hangup();
      this.socket.destroy();
    });
    this.socket.on('error', (error: Error) => {
      this.error = error;
    });
    this.socket.on('close', () => events.closed(this.error));
  }

  write(chunk: Buffer): void {
    if (!this.socket.destroyed && !this.socket.writableEnded) this.socket.write(chunk);
  }

  discardPendingWrites(): void {
    // Nothing to do: a socket's hangup destroys it, and with it whatever was queued.
  }

  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  close(): void {
    this.socket.destroy();
  }
}
