/**
 * The HTTP and HTTPS step of egress policies: a restricted VM's connections to port 80 and 443 are redirected
 * to this VM's two listeners. Node cannot read a redirected socket's original destination (SO_ORIGINAL_DST),
 * so the proxy works from what the guest asked for, which is also what the policy names: the Host header of
 * the first request, or the SNI of the TLS ClientHello. It asks `decide` (policy, pinned address, host guard),
 * then connects upstream itself and splices bytes, counting them, and reports each connection once.
 *
 * The connection goes through three steps: read the name, decide, then `splice`. For the vault, the decision
 * may instead hand an HTTPS connection to `intercept` (TLS terminated by sandboxd, requests rewritten: see
 * tls-interceptor.ts), or ask for the cleartext of a spliced HTTP connection (`inspect`, to flag placeholders).
 */
import net from 'node:net';
import { once } from 'node:events';
import { MAX_CLIENT_HELLO_BYTES, parseClientHello } from './tls-client-hello.ts';

export type EgressScheme = 'http' | 'https';

/** What the guest asked for. */
export interface EgressRequest {
  scheme: EgressScheme;
  /** Host header or SNI, lower case without port; null when the guest sent none (or an IP literal for HTTP: see `address`). */
  name: string | null;
  /** The IP literal of an HTTP Host header (a request to a raw address). */
  literalAddress: string | null;
  port: number;
}

export type EgressDecision =
  | {
      allowed: true;
      address: string;
      /** Terminate TLS and hand the connection to `EgressProxyOptions.intercept`. */
      intercept?: boolean;
      /** Sees every byte the guest sends on a spliced connection. */
      inspect?: (chunk: Buffer) => void;
    }
  | { allowed: false; reason: string };

/** What an intercepted connection carried. */
export interface InterceptOutcome {
  bytesSent: number;
  bytesReceived: number;
  error: Error | null;
}

/** One finished proxied connection. */
export interface ProxiedConnection {
  request: EgressRequest;
  /** The address connected to, when any. */
  address: string | null;
  verdict: 'allowed' | 'refused';
  reason: string | null;
  bytesSent: number;
  bytesReceived: number;
  startedAt: Date;
}

export interface EgressProxyOptions {
  decide(request: EgressRequest): Promise<EgressDecision>;
  record(connection: ProxiedConnection): void;
  /** Takes over an allowed connection the decision marked `intercept` (its ClientHello in `head`). */
  intercept?(socket: net.Socket, head: Buffer, request: EgressRequest, address: string): Promise<InterceptOutcome>;
  /** How long a client has to send its first request or ClientHello. */
  firstBytesTimeoutMs?: number;
  connectTimeoutMs?: number;
}

const MAX_HTTP_HEAD_BYTES = 16 * 1024;

/** The Host of the first request head in `data`: undefined while incomplete, null when there is none. */
export function httpHostOf(data: Buffer): string | null | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end === -1) return data.length >= MAX_HTTP_HEAD_BYTES ? null : undefined;
  const lines = data.subarray(0, end).toString('latin1').split('\r\n');
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === 'host') return line.slice(colon + 1).trim().toLowerCase() || null;
  }
  return null;
}

/** Splits a Host value into name or IP literal (ports are dropped: the redirect was from port 80). */
function hostParts(host: string): { name: string | null; literalAddress: string | null } {
  const bare = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:\d*$/, '');
  const clean = bare.replace(/\.$/, '');
  if (net.isIP(clean)) return { name: null, literalAddress: clean };
  return { name: /^[a-z0-9._-]{1,253}$/.test(clean) ? clean : null, literalAddress: null };
}

/** The two listeners of one VM. */
export class EgressProxy {
  private readonly servers: net.Server[] = [];
  private readonly sockets = new Set<net.Socket>();

  constructor(private readonly options: EgressProxyOptions) {}

  /** Listens on two loopback ports; resolves with them. */
  async listen(): Promise<{ httpPort: number; httpsPort: number }> {
    const http = await this.serve('http');
    const https = await this.serve('https');
    return { httpPort: http, httpsPort: https };
  }

  private async serve(scheme: EgressScheme): Promise<number> {
    const server = net.createServer((socket) => void this.handle(scheme, socket));
    this.servers.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return (server.address() as net.AddressInfo).port;
  }

  /** Reads until the name is known; undefined when the client went away or sent nothing usable in time. */
  private readFirstBytes(scheme: EgressScheme, socket: net.Socket): Promise<{ head: Buffer; host: string | null } | undefined> {
    return new Promise((resolve) => {
      let head = Buffer.alloc(0);
      const finish = (value: { head: Buffer; host: string | null } | undefined) => {
        clearTimeout(timer);
        socket.off('data', onData);
        socket.off('close', onClose);
        socket.pause();
        resolve(value);
      };
      const onData = (chunk: Buffer) => {
        head = Buffer.concat([head, chunk]);
        if (scheme === 'http') {
          const host = httpHostOf(head);
          if (host !== undefined) finish({ head, host });
        } else {
          const hello = parseClientHello(head);
          if (hello.kind === 'hello') finish({ head, host: hello.serverName });
          else if (hello.kind === 'invalid' || head.length > MAX_CLIENT_HELLO_BYTES) finish({ head, host: null });
        }
      };
      const onClose = () => finish(undefined);
      const timer = setTimeout(() => finish(head.length ? { head, host: null } : undefined), this.options.firstBytesTimeoutMs ?? 10_000);
      socket.on('data', onData);
      socket.once('close', onClose);
    });
  }

  private async handle(scheme: EgressScheme, socket: net.Socket): Promise<void> {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
    const startedAt = new Date();
    const port = scheme === 'http' ? 80 : 443;
    const first = await this.readFirstBytes(scheme, socket);
    if (!first) return void socket.destroy();
    const parts = first.host ? hostParts(first.host) : { name: null, literalAddress: null };
    const request: EgressRequest = { scheme, port, ...parts };
    let decision: EgressDecision;
    try {
      decision = await this.options.decide(request);
    } catch (error) {
      decision = { allowed: false, reason: `could not resolve: ${(error as Error).message}` };
    }
    if (!decision.allowed) {
      this.options.record({ request, address: null, verdict: 'refused', reason: decision.reason, bytesSent: 0, bytesReceived: 0, startedAt });
      if (scheme === 'http') {
        const body = `sandboxd: the egress policy of this VM refuses ${request.name ?? request.literalAddress ?? 'this request'} (${decision.reason})\n`;
        socket.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\nx-sandboxd-egress: refused\r\n\r\n${body}`);
      } else socket.resetAndDestroy();
      return;
    }
    if (decision.intercept && this.options.intercept) {
      const outcome = await this.options.intercept(socket, first.head, request, decision.address).catch((error: Error) => ({ bytesSent: 0, bytesReceived: 0, error }));
      this.options.record({
        request,
        address: decision.address,
        verdict: 'allowed',
        reason: outcome.error ? `intercepted (vault): ${outcome.error.message}` : 'intercepted (vault)',
        bytesSent: outcome.bytesSent,
        bytesReceived: outcome.bytesReceived,
        startedAt,
      });
      return;
    }
    await this.splice(request, decision.address, first.head, socket, startedAt, decision.inspect);
  }

  /** Connects to `address` and copies bytes both ways until either side ends, then records the connection. */
  private async splice(request: EgressRequest, address: string, head: Buffer, socket: net.Socket, startedAt: Date, inspect?: (chunk: Buffer) => void): Promise<void> {
    const upstream = net.connect({ host: address, port: request.port });
    this.sockets.add(upstream);
    upstream.setTimeout(this.options.connectTimeoutMs ?? 10_000, () => upstream.destroy(new Error('connect timeout')));
    let bytesSent = head.length;
    let bytesReceived = 0;
    let connected = false;
    let recorded = false;
    const record = (error?: Error) => {
      if (recorded) return;
      recorded = true;
      const failed = !connected;
      this.options.record({
        request,
        address,
        verdict: failed ? 'refused' : 'allowed',
        reason: failed ? `upstream unreachable: ${error?.message ?? 'closed'}` : null,
        bytesSent: failed ? 0 : bytesSent,
        bytesReceived,
        startedAt,
      });
    };
    upstream.once('connect', () => {
      connected = true;
      upstream.setTimeout(0);
      upstream.write(head);
      inspect?.(head);
      socket.on('data', (chunk: Buffer) => {
        bytesSent += chunk.length;
        inspect?.(chunk);
      });
      upstream.on('data', (chunk: Buffer) => (bytesReceived += chunk.length));
      socket.pipe(upstream);
      upstream.pipe(socket);
      socket.resume();
    });
    upstream.on('error', (error) => {
      record(error);
      socket.destroy();
    });
    socket.once('close', () => upstream.destroy());
    upstream.once('close', () => {
      this.sockets.delete(upstream);
      record();
      socket.end();
    });
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await Promise.all(this.servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }
}
