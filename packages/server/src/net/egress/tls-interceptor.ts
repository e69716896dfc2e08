/**
 * The vault's step for a host a secret is bound to: instead of splicing a guest's TLS connection through, sandboxd
 * terminates it with a leaf certificate for the SNI name (signed by the deployment CA the guest trusts), reads
 * the HTTP/1.1 requests on it, lets `rewrite` swap placeholders for the real secrets in each request, and sends
 * it on to the real server over a TLS connection of its own that verifies the server's certificate for the name.
 *
 * Node's own HTTP machinery does the parsing and framing on both sides (a private, never listening `http.Server`
 * for the guest, `https.request` upstream), so that keep-alive, chunked and content-length bodies, pipelining and
 * upgrades behave as in any Node proxy and bodies stream both ways without being buffered. Only hop-by-hop
 * headers are handled here (RFC 9110 §7.6.1): each side frames its own connection.
 *
 * The guest's ClientHello was already read by the egress proxy (to learn the name): `handle` puts it back with
 * `socket.unshift`. That works: when a `tls.TLSSocket` takes over a `net.Socket`, Node feeds the data buffered
 * in the socket's readable side to the TLS engine first (`initRead` in lib/_tls_wrap.js), and the test
 * "the ClientHello read by the egress step is put back" proves it on a paused socket.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import type { LeafCertificates } from './certificate-authority.ts';

export interface InterceptedRequest {
  /** The SNI name the guest connected to. */
  name: string;
  method: string;
  /** Request target as the guest sent it (path and query). */
  path: string;
  /** Node's rawHeaders layout: [name, value, name, value, ...], as the guest sent them. */
  rawHeaders: string[];
}

export interface RewrittenRequest {
  path: string;
  rawHeaders: string[];
  /** Called once the upstream answered (status) or failed (null, with the error). */
  done?(status: number | null, error?: Error): void;
}

export interface TlsInterceptorOptions {
  leafs: LeafCertificates;
  /** Extra PEM CA certificates upstream servers may chain to, besides Node's bundled roots (tls.rootCertificates). */
  upstreamCa?: string[];
  /**
   * Returns the request to send upstream. Throwing (or rejecting) refuses the request: the guest gets a 502 whose
   * body carries the error's message, so the message must not contain a secret.
   */
  rewrite(request: InterceptedRequest): RewrittenRequest | Promise<RewrittenRequest>;
  /** How long connecting to the upstream and its TLS handshake may take. */
  connectTimeoutMs?: number;
  /** How long a guest has to complete its TLS handshake. */
  handshakeTimeoutMs?: number;
}

/** One finished guest connection. */
export interface InterceptedConnection {
  /** Plaintext bytes the guest sent (request heads and bodies, and upgraded traffic). */
  bytesSent: number;
  /** Plaintext bytes the guest was sent. */
  bytesReceived: number;
  /** Requests read on the connection, upgrades included. */
  requests: number;
  /** Why the connection failed as a whole (a name no leaf can be made for, the TLS handshake, a reset); a failed request goes to its `done`. */
  error: Error | null;
}

/**
 * Hop-by-hop headers (RFC 9110 §7.6.1, and the never-standard keep-alive and proxy-connection): they describe one
 * connection, so they are dropped on the way through, as are the headers a Connection header names.
 */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** The OpenSSL verification failures Node reports as error codes (besides the host name check). */
const CERTIFICATE_ERRORS = new Set([
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'CERT_SIGNATURE_FAILURE',
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'ERROR_IN_CERT_NOT_BEFORE_FIELD',
  'ERROR_IN_CERT_NOT_AFTER_FIELD',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'CERT_CHAIN_TOO_LONG',
  'CERT_REVOKED',
  'INVALID_CA',
  'PATH_LENGTH_EXCEEDED',
  'INVALID_PURPOSE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'HOSTNAME_MISMATCH',
]);

class UpstreamTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
}

/** Headers to send on (flat, as rawHeaders): hop-by-hop ones and `drop` removed, then what this side needs added. */
function endToEndHeaders(rawHeaders: readonly string[], { add = [], drop = [] }: { add?: string[]; drop?: string[] } = {}): string[] {
  const named = new Set<string>(drop);
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() !== 'connection') continue;
    for (const token of rawHeaders[i + 1]!.split(',')) named.add(token.trim().toLowerCase());
  }
  const kept: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const lower = rawHeaders[i]!.toLowerCase();
    if (HOP_BY_HOP.has(lower) || lower.startsWith('proxy-') || named.has(lower)) continue;
    kept.push(rawHeaders[i]!, rawHeaders[i + 1]!);
  }
  return kept.concat(add);
}

/** What the guest is told when its request could not be forwarded (no secret is ever in these messages). */
function describeUpstreamError(error: Error, name: string, address: string, port: number): string {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  if (CERTIFICATE_ERRORS.has(code)) return `sandboxd vault: the upstream certificate is not valid for ${name}: ${error.message}`;
  if (error instanceof UpstreamTimeoutError) return `sandboxd vault: ${name} (${address}:${port}) did not accept a TLS connection in time: ${error.message}`;
  return `sandboxd vault: could not reach ${name} (${address}:${port}): ${error.message}`;
}

/** A raw HTTP/1.1 response head, for a socket the HTTP server has handed over (upgrades). */
function responseHead(status: number, statusMessage: string, rawHeaders: readonly string[]): string {
  let head = `HTTP/1.1 ${status} ${statusMessage}\r\n`;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) head += `${rawHeaders[i]}: ${rawHeaders[i + 1]}\r\n`;
  return `${head}\r\n`;
}

/** A plain-text answer of sandboxd's own on a handed-over socket, which is then closed. */
function endRawWithText(socket: net.Socket, status: number, statusMessage: string, text: string): void {
  const body = Buffer.from(`${text}\n`);
  socket.end(responseHead(status, statusMessage, ['content-type', 'text/plain; charset=utf-8', 'content-length', String(body.length), 'connection', 'close', 'x-sandboxd-vault', 'not-forwarded']) + body.toString('latin1'), 'latin1');
}

/** A guest connection being served. */
interface GuestConnection {
  name: string;
  address: string;
  port: number;
  stats: InterceptedConnection;
}

/** Wraps `done` so that it runs at most once and never throws into the proxy. */
function onceDone(done: RewrittenRequest['done']): (status: number | null, error?: Error) => void {
  let called = false;
  return (status, error) => {
    if (called || !done) return;
    called = true;
    try {
      if (error) done(status, error);
      else done(status);
    } catch {
      // The caller's bookkeeping failing must not break the guest's connection.
    }
  };
}

/** Terminates guests' TLS for bound hosts and forwards their requests, rewritten, to the real servers. */
export class TlsInterceptor {
  /** Never listens: guest connections are handed to it with `emit('connection')`. */
  private readonly server: http.Server;
  private readonly agent: https.Agent;
  /** The roots upstream certificates are verified against, built once (parsing ~150 roots takes milliseconds). */
  private readonly upstreamContext: tls.SecureContext;
  private readonly connections = new WeakMap<net.Socket, GuestConnection>();
  /** Everything `close` must destroy: guest sockets (raw and TLS), upgraded upstream sockets, upstream requests. */
  private readonly open = new Set<{ destroy(): unknown }>();
  private readonly handling = new Set<Promise<InterceptedConnection>>();

  constructor(private readonly options: TlsInterceptorOptions) {
    this.upstreamContext = tls.createSecureContext({ ca: [...tls.rootCertificates, ...(options.upstreamCa ?? [])] });
    this.agent = new https.Agent({ keepAlive: true });
    this.server = http.createServer();
    // Whatever goes wrong with one request ends that request's connection, never the process.
    this.server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => void this.forward(req, res).catch(() => res.destroy()));
    this.server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => void this.forwardUpgrade(req, socket, head).catch(() => socket.destroy()));
  }

  /**
   * Takes over `socket`, a client connection of which `head` (the complete TLS ClientHello, and maybe more)
   * was already read (the socket is paused). Terminates TLS as `name` (ALPN: only http/1.1 offered, so HTTP/2
   * clients fall back), and forwards every HTTP/1.1 request on it (keep-alive, chunked and content-length
   * bodies, streamed both ways, not buffered) to `address`:`port` over TLS with SNI `name`, verifying the
   * upstream certificate for `name` against tls.rootCertificates + upstreamCa. Resolves once the client
   * connection is closed; bytes counted are the guest's plaintext request bytes and response bytes.
   */
  handle(socket: net.Socket, head: Buffer, name: string, address: string, port: number): Promise<InterceptedConnection> {
    const handling = this.serve(socket, head, name, address, port);
    this.handling.add(handling);
    void handling.finally(() => this.handling.delete(handling));
    return handling;
  }

  private async serve(socket: net.Socket, head: Buffer, name: string, address: string, port: number): Promise<InterceptedConnection> {
    const stats: InterceptedConnection = { bytesSent: 0, bytesReceived: 0, requests: 0, error: null };
    const fail = (error: Error) => (stats.error ??= error);
    this.track(socket);
    socket.on('error', fail);
    let context: tls.SecureContext;
    try {
      context = await this.options.leafs.secureContextFor(name);
    } catch (error) {
      fail(error as Error);
      socket.destroy();
      return stats;
    }
    if (socket.destroyed) return stats;

    socket.unshift(head);
    const guest = new tls.TLSSocket(socket, { isServer: true, secureContext: context, ALPNProtocols: ['http/1.1'] });
    this.track(guest);
    const closed = new Promise<void>((resolve) => guest.once('close', () => resolve()));
    guest.on('error', fail);
    const handshakeMs = this.options.handshakeTimeoutMs ?? 10_000;
    const timer = setTimeout(() => guest.destroy(new Error(`the client did not complete the TLS handshake within ${handshakeMs} ms`)), handshakeMs);
    guest.once('close', () => clearTimeout(timer));
    guest.once('secure', () => {
      clearTimeout(timer);
      this.connections.set(guest, { name, address, port, stats });
      this.server.emit('connection', guest);
    });
    await closed;
    // The plaintext the TLS layer passed in and out (the handle's counters, kept by Node after it is closed).
    stats.bytesSent = guest.bytesRead;
    stats.bytesReceived = guest.bytesWritten;
    return stats;
  }

  private track(item: { destroy(): unknown; once(event: 'close', listener: () => void): unknown }): void {
    this.open.add(item);
    item.once('close', () => this.open.delete(item));
  }

  /** Calls `rewrite`; null (after answering the guest) when it refused or failed. */
  private async rewritten(connection: GuestConnection, req: http.IncomingMessage, refuse: (text: string) => void): Promise<RewrittenRequest | null> {
    try {
      return await this.options.rewrite({ name: connection.name, method: req.method ?? 'GET', path: req.url ?? '/', rawHeaders: [...req.rawHeaders] });
    } catch (error) {
      refuse(`sandboxd vault: the request to ${connection.name} was not forwarded: ${(error as Error).message}`);
      return null;
    }
  }

  /** The options of an upstream request to the connection's address, verified for its name. */
  private upstreamOptions(connection: GuestConnection, method: string, path: string, headers: string[]): https.RequestOptions & Pick<tls.ConnectionOptions, 'secureContext' | 'ALPNProtocols'> {
    const { name } = connection;
    return {
      host: connection.address,
      port: connection.port,
      // SNI cannot carry an IP literal; the identity check below still uses the name.
      ...(net.isIP(name) ? {} : { servername: name }),
      checkServerIdentity: (_host: string, cert: tls.PeerCertificate) => tls.checkServerIdentity(name, cert),
      secureContext: this.upstreamContext,
      ALPNProtocols: ['http/1.1'],
      method,
      path,
      headers,
    };
  }

  /** Starts an upstream request; null (after answering the guest) when the rewritten request is not valid HTTP (a CR or LF in a header, say). */
  private request(connection: GuestConnection, options: https.RequestOptions, done: (status: number | null, error?: Error) => void, refuse: (text: string) => void): http.ClientRequest | null {
    let upstream: http.ClientRequest;
    try {
      upstream = https.request(options);
    } catch (error) {
      done(null, error as Error);
      refuse(`sandboxd vault: the rewritten request to ${connection.name} is not valid HTTP: ${(error as Error).message}`);
      return null;
    }
    this.track(upstream);
    return upstream;
  }

  /** Fails `request` when a new upstream connection is not up (TCP and TLS) within the connect timeout. */
  private limitConnect(request: http.ClientRequest): void {
    const timeoutMs = this.options.connectTimeoutMs ?? 10_000;
    request.once('socket', (socket: net.Socket) => {
      if (request.reusedSocket) return;
      const timer = setTimeout(() => request.destroy(new UpstreamTimeoutError(`no TLS connection after ${timeoutMs} ms`)), timeoutMs);
      socket.once('secureConnect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
  }

  private async forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const connection = this.connections.get(req.socket);
    if (!connection) return void res.destroy();
    connection.stats.requests++;
    const refuse = (text: string) => {
      if (res.headersSent) return void res.destroy();
      const body = `${text}\n`;
      res.writeHead(502, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), 'x-sandboxd-vault': 'not-forwarded' });
      res.end(body);
    };
    const rewritten = await this.rewritten(connection, req, refuse);
    if (!rewritten) return;
    const done = onceDone(rewritten.done);
    if (res.destroyed) return done(null, new Error('the client went away before the request was sent'));

    // Node's parser removed the guest's chunked framing; the upstream request is framed anew (chunked again, as
    // Node does not add chunked framing by itself for methods like GET). The guest's Expect was already answered
    // by the server (100 Continue), so it is not passed on.
    const framing = req.headers['transfer-encoding'] !== undefined ? ['Transfer-Encoding', 'chunked'] : [];
    const headers = endToEndHeaders(rewritten.rawHeaders, { add: framing, drop: ['expect'] });
    const upstream = this.request(connection, { ...this.upstreamOptions(connection, req.method ?? 'GET', rewritten.path, headers), agent: this.agent }, done, refuse);
    if (!upstream) return;
    this.limitConnect(upstream);

    upstream.on('response', (answer: http.IncomingMessage) => {
      const status = answer.statusCode ?? 502;
      done(status);
      res.sendDate = false; // the upstream's Date header is passed on
      res.writeHead(status, answer.statusMessage, endToEndHeaders(answer.rawHeaders));
      answer.pipe(res);
      answer.on('error', () => res.destroy());
    });
    upstream.on('error', (error: Error) => {
      done(null, error);
      // Before the answer began the guest is told why; after, only a cut connection can tell it the body is short.
      if (res.headersSent) res.destroy();
      else refuse(describeUpstreamError(error, connection.name, connection.address, connection.port));
    });
    // The guest went away (or the answer was cut): the upstream request is abandoned, not left to finish.
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }

  private async forwardUpgrade(req: http.IncomingMessage, socket: net.Socket, head: Buffer): Promise<void> {
    const connection = this.connections.get(socket);
    if (!connection) return void socket.destroy();
    connection.stats.requests++;
    const rewritten = await this.rewritten(connection, req, (text) => endRawWithText(socket, 502, 'Bad Gateway', text));
    if (!rewritten) return;
    const done = onceDone(rewritten.done);
    if (socket.destroyed) return done(null, new Error('the client went away before the request was sent'));

    const protocol = req.headers.upgrade ?? '';
    const headers = endToEndHeaders(rewritten.rawHeaders, { add: ['Connection', 'Upgrade', 'Upgrade', protocol] });
    // Its own connection, not the agent's: an upgraded socket never returns to a pool.
    const upstream = this.request(connection, { ...this.upstreamOptions(connection, req.method ?? 'GET', rewritten.path, headers), agent: false }, done, (text) =>
      endRawWithText(socket, 502, 'Bad Gateway', text),
    );
    if (!upstream) return;
    this.limitConnect(upstream);

    upstream.on('upgrade', (answer: http.IncomingMessage, upstreamSocket: net.Socket, upstreamHead: Buffer) => {
      done(answer.statusCode ?? 101);
      this.track(upstreamSocket);
      // The 101's headers (Connection, Upgrade, Sec-WebSocket-Accept) belong to the upgrade and go through as they are.
      socket.write(responseHead(answer.statusCode ?? 101, answer.statusMessage ?? 'Switching Protocols', answer.rawHeaders));
      if (upstreamHead.length) socket.write(upstreamHead);
      if (head.length) upstreamSocket.write(head);
      upstreamSocket.on('error', () => socket.destroy());
      socket.on('error', () => upstreamSocket.destroy());
      upstreamSocket.once('close', () => socket.destroy());
      socket.once('close', () => upstreamSocket.destroy());
      socket.pipe(upstreamSocket);
      upstreamSocket.pipe(socket);
    });
    // The server declined the upgrade: its answer is relayed and the connection closed (it cannot carry more).
    upstream.on('response', (answer: http.IncomingMessage) => {
      done(answer.statusCode ?? 502);
      socket.write(responseHead(answer.statusCode ?? 502, answer.statusMessage ?? '', endToEndHeaders(answer.rawHeaders, { add: ['Connection', 'close'] })));
      answer.pipe(socket);
      answer.on('error', () => socket.destroy());
    });
    upstream.on('error', (error: Error) => {
      done(null, error);
      if (socket.writable) endRawWithText(socket, 502, 'Bad Gateway', describeUpstreamError(error, connection.name, connection.address, connection.port));
      else socket.destroy();
    });
    socket.once('close', () => upstream.destroy());
    upstream.end();
  }

  /** Destroys every connection it holds. */
  async close(): Promise<void> {
    for (const item of this.open) item.destroy();
    this.agent.destroy();
    await Promise.all(this.handling);
  }
}
