/**
 * Gives Playwright a WebSocket URL for a Chromium that listens only on a VM's loopback. Playwright's
 * `connectOverCDP` takes a URL, not a socket, and the VM has no address the host can reach (no tap, no host
 * port): every byte to it goes through the agent's TCP tunnel. So one HTTP server per process listens on the
 * host's loopback, and each connection registered with it (`register`) gets a path with a random token; a
 * WebSocket upgrade on that path opens a tunnel to the guest's DevTools port and is forwarded byte for byte with
 * the path rewritten to the browser's own (`/devtools/browser/<id>`). Anything else on the listener is 404.
 *
 * A token is 256 random bits, valid for one registration (one browser session's connection) and removed with it;
 * the listener is on 127.0.0.1 only, and guests cannot reach the host's loopback (the network guard).
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** Opens a TCP connection to the guest's DevTools port (through the agent). */
export type TunnelOpener = () => Promise<Duplex>;

export interface CdpRegistration {
  /** `ws://127.0.0.1:<port>/cdp/<token>`: hand it to `chromium.connectOverCDP`. */
  wsUrl: string;
  /** Forgets the token and ends its open connections. */
  dispose(): void;
}

interface Target {
  open: TunnelOpener;
  /** `/devtools/browser/<id>`, read once from the guest's `/json/version`. */
  browserPath: string;
  sockets: Set<Duplex>;
}

export class CdpBridge {
  private readonly targets = new Map<string, Target>();
  private server: http.Server | undefined;
  private listening: Promise<number> | undefined;

  /** Registers a guest's DevTools endpoint; reads its browser path through one tunnel first. */
  async register(open: TunnelOpener): Promise<CdpRegistration> {
    const port = await this.listen();
    const browserPath = await readBrowserPath(open);
    const token = randomBytes(32).toString('base64url');
    const target: Target = { open, browserPath, sockets: new Set() };
    this.targets.set(token, target);
    return {
      wsUrl: `ws://127.0.0.1:${port}/cdp/${token}`,
      dispose: () => {
        this.targets.delete(token);
        for (const socket of target.sockets) socket.destroy();
      },
    };
  }

  async close(): Promise<void> {
    for (const target of this.targets.values()) for (const socket of target.sockets) socket.destroy();
    this.targets.clear();
    const server = this.server;
    this.server = undefined;
    this.listening = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private listen(): Promise<number> {
    this.listening ??= new Promise<number>((resolve, reject) => {
      const server = http.createServer((_request, response) => {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      });
      server.on('upgrade', (request: http.IncomingMessage, socket: Socket, head: Buffer) => void this.forward(request, socket, head));
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
      server.unref();
      this.server = server;
    });
    return this.listening;
  }

  private async forward(request: http.IncomingMessage, socket: Socket, head: Buffer): Promise<void> {
    const token = /^\/cdp\/([A-Za-z0-9_-]{43})$/.exec(request.url ?? '')?.[1];
    const target = token ? this.targets.get(token) : undefined;
    if (!target) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    let tunnel: Duplex;
    try {
      tunnel = await target.open();
    } catch {
      socket.end('HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    target.sockets.add(socket);
    target.sockets.add(tunnel);
    const forget = () => {
      target.sockets.delete(socket);
      target.sockets.delete(tunnel);
      socket.destroy();
      tunnel.destroy();
    };
    socket.once('close', forget);
    tunnel.once('close', forget);
    socket.on('error', forget);
    tunnel.on('error', forget);
    // The request head again, for the browser's own path; the Host stays loopback (DevTools checks it).
    const lines = [`GET ${target.browserPath} HTTP/1.1`];
    for (let i = 0; i < request.rawHeaders.length; i += 2) {
      const name = request.rawHeaders[i]!;
      if (name.toLowerCase() === 'host') continue;
      lines.push(`${name}: ${request.rawHeaders[i + 1]}`);
    }
    lines.push('Host: 127.0.0.1');
    // Buffers only: the tunnel's HTTP/2 stream garbles string chunks on Node 20 (see agent/tunnel.ts).
    tunnel.write(Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'));
    if (head.length > 0) tunnel.write(head);
    socket.setNoDelay(true);
    tunnel.pipe(socket);
    socket.pipe(tunnel);
  }
}

/** `GET /json/version` through a tunnel: the browser's WebSocket path. */
async function readBrowserPath(open: TunnelOpener): Promise<string> {
  const tunnel = await open();
  const body = await new Promise<string>((resolve, reject) => {
    const request = http.request(
      {
        host: '127.0.0.1',
        path: '/json/version',
        method: 'GET',
        createConnection: () => tunnel as Socket,
        headers: { host: '127.0.0.1', connection: 'close' },
        timeout: 30_000,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error('the browser in the VM did not answer /json/version within 30 s')));
    request.on('error', reject);
    request.end();
  }).finally(() => tunnel.destroy());
  const url = (JSON.parse(body) as { webSocketDebuggerUrl?: string }).webSocketDebuggerUrl;
  const path = url ? new URL(url).pathname : '';
  if (!/^\/devtools\/browser\/[A-Za-z0-9-]+$/.test(path)) throw new Error(`the browser in the VM gave no usable DevTools URL: ${body.slice(0, 200)}`);
  return path;
}
