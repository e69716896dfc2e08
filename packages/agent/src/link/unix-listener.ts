/**
 * The unix transport for tests and development on a host: the agent listens on a socket path and serves one
 * host at a time. A newer connection replaces the current one, like a host that reconnects to its VM.
 */
import { unlink } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import type { ByteLink } from './byte-link.ts';
import { SocketLink } from './socket-link.ts';

/** Listens on `path` and hands each accepted connection, as a link, to `serve`. */
export class UnixListener {
  private server: Server | undefined;
  private current: Socket | undefined;

  constructor(
    private readonly path: string,
    private readonly serve: (link: ByteLink) => void,
  ) {}

  /** Starts listening; a stale socket file from an earlier run is replaced. */
  async listen(): Promise<void> {
    await unlink(this.path).catch(() => undefined);
    const server = createServer((socket) => {
      this.current?.destroy();
      this.current = socket;
      socket.on('close', () => {
        if (this.current === socket) this.current = undefined;
      });
      this.serve(new SocketLink(socket, `unix:${this.path}`));
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.path, () => {
        server.off('error', reject);
        resolve();
      });
    });
  }

  /** Stops listening and drops the current host. */
  async close(): Promise<void> {
    this.current?.destroy();
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await unlink(this.path).catch(() => undefined);
  }
}
