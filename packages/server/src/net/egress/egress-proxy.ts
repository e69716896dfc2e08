/**
 * The HTTP and HTTPS step of egress policies: a restricted VM's connections to port 80 and 443 are redirected
 * to this VM's two listeners. Node cannot read a redirected socket's original destination (SO_ORIGINAL_DST),
 * so the proxy works from what the guest asked for, which is also what the policy names, and connects upstream
 * itself to the address pinned for that name (never to one the guest chose).
 *
 * - HTTP: every request is checked on its own, by its Host (`http-forwarder.ts`): a connection is never
 *   decided by its first request.
 * - HTTPS: the SNI of the TLS ClientHello decides the connection, then bytes are spliced, counted, and the
 *   connection reported once. Without terminating TLS nothing else is visible: a server that routes on the
 *   inner Host rather than the SNI (domain fronting) is the residual risk of any SNI-based filter, and a
 *   ClientHello that hides its real name with Encrypted Client Hello is refused under a restricted policy.
 *   For the vault, the decision may instead hand the connection to `intercept` (TLS terminated by sandboxd,
 *   each request rewritten: see tls-interceptor.ts).
 */
import net from 'node:net';
import { once } from 'node:events';
import { HttpForwarder } from './http-forwarder.ts';
import type { EgressDecision, EgressRequest, EgressScheme, ProxiedConnection } from './proxied-connection.ts';
import { MAX_CLIENT_HELLO_BYTES, parseClientHello } from './tls-client-hello.ts';

/** What an intercepted connection carried. */
export interface InterceptOutcome {
  bytesSent: number;
  bytesReceived: number;
  error: Error | null;
}

export interface EgressProxyOptions {
  decide(request: EgressRequest): Promise<EgressDecision>;
  record(connection: ProxiedConnection): void;
  /** Takes over an allowed connection the decision marked `intercept` (its ClientHello in `head`). */
  intercept?(socket: net.Socket, head: Buffer, request: EgressRequest, address: string): Promise<InterceptOutcome>;
  /** How long a client has to send its first request head or ClientHello. */
  firstBytesTimeoutMs?: number;
  connectTimeoutMs?: number;
}

/** The two listeners of one VM. */
export class EgressProxy {
  private readonly servers: net.Server[] = [];
  private readonly sockets = new Set<net.Socket>();
  private readonly http: HttpForwarder;

  constructor(private readonly options: EgressProxyOptions) {
    this.http = new HttpForwarder({
      decide: options.decide,
      record: options.record,
      ...(options.firstBytesTimeoutMs !== undefined ? { firstBytesTimeoutMs: options.firstBytesTimeoutMs } : {}),
      ...(options.connectTimeoutMs !== undefined ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
    });
  }

  /** Listens on two loopback ports; resolves with them. */
  async listen(): Promise<{ httpPort: number; httpsPort: number }> {
    const http = await this.serve('http');
    const https = await this.serve('https');
    return { httpPort: http, httpsPort: https };
  }

  private async serve(scheme: EgressScheme): Promise<number> {
    const server = net.createServer((socket) => (scheme === 'http' ? this.http.handle(socket) : void this.handleTls(socket)));
    this.servers.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return (server.address() as net.AddressInfo).port;
  }

  /** Reads until the ClientHello is complete; undefined when the client went away or sent nothing usable in time. */
  private readClientHello(socket: net.Socket): Promise<{ head: Buffer; host: string | null; encryptedClientHello: boolean } | undefined> {
    return new Promise((resolve) => {
      let head = Buffer.alloc(0);
      const finish = (value: { head: Buffer; host: string | null; encryptedClientHello: boolean } | undefined) => {
        clearTimeout(timer);
        socket.off('data', onData);
        socket.off('close', onClose);
        socket.pause();
        resolve(value);
      };
      const onData = (chunk: Buffer) => {
        head = Buffer.concat([head, chunk]);
        const hello = parseClientHello(head);
        if (hello.kind === 'hello') finish({ head, host: hello.serverName, encryptedClientHello: hello.encryptedClientHello });
        else if (hello.kind === 'invalid' || head.length > MAX_CLIENT_HELLO_BYTES) finish({ head, host: null, encryptedClientHello: false });
      };
      const onClose = () => finish(undefined);
      const timer = setTimeout(
        () => finish(head.length ? { head, host: null, encryptedClientHello: false } : undefined),
        this.options.firstBytesTimeoutMs ?? 10_000,
      );
      socket.on('data', onData);
      socket.once('close', onClose);
    });
  }

  private async handleTls(socket: net.Socket): Promise<void> {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
    const startedAt = new Date();
    const first = await this.readClientHello(socket);
    if (!first) return void socket.destroy();
    const request: EgressRequest = { scheme: 'https', port: 443, name: first.host, literalAddress: null, encryptedClientHello: first.encryptedClientHello };
    let decision: EgressDecision;
    try {
      decision = await this.options.decide(request);
    } catch (error) {
      decision = { allowed: false, reason: `could not resolve: ${(error as Error).message}` };
    }
    if (!decision.allowed) {
      this.options.record({ request, address: null, verdict: 'refused', reason: decision.reason, bytesSent: 0, bytesReceived: 0, startedAt });
      socket.resetAndDestroy();
      return;
    }
    if (decision.intercept && this.options.intercept) {
      const outcome = await this.options
        .intercept(socket, first.head, request, decision.address)
        .catch((error: Error) => ({ bytesSent: 0, bytesReceived: 0, error }));
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
  private async splice(
    request: EgressRequest,
    address: string,
    head: Buffer,
    socket: net.Socket,
    startedAt: Date,
    inspect?: (chunk: Buffer) => void,
  ): Promise<void> {
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
    await this.http.close();
    await Promise.all(this.servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }
}
