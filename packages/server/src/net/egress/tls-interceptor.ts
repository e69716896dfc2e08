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
 *
 * This file runs the connections; the checks and the upstream side live beside it: `intercepted-request-target.ts`
 * (is a request for the connection's name), `scrubbed-answer.ts` (what of an answer the guest sees when secrets are
 * masked), `verified-upstream.ts` (the upstream request, verified for the name).
 */
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import { pipeline } from 'node:stream';
import tls from 'node:tls';
import type { LeafCertificates } from './certificate-authority.ts';
import { endToEndHeaders, responseHead } from './http-relay-headers.ts';
import { misdirection, originForm } from './intercepted-request-target.ts';
import { headerValue, scrubbedAnswer } from './scrubbed-answer.ts';
import { describeUpstreamError, limitConnect, upstreamHeaders, upstreamOptions, upstreamTrust, type UpstreamTarget } from './verified-upstream.ts';
import type { InterceptedRequest, RewrittenRequest } from '../../core/vault/vault-ports.ts';

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

/** A plain-text answer of sandboxd's own on a handed-over socket, which is then closed. */
function endRawWithText(socket: net.Socket, status: number, statusMessage: string, text: string): void {
  const body = Buffer.from(`${text}\n`);
  socket.end(
    responseHead(status, statusMessage, [
      'content-type',
      'text/plain; charset=utf-8',
      'content-length',
      String(body.length),
      'connection',
      'close',
      'x-sandboxd-vault',
      'not-forwarded',
    ]) + body.toString('latin1'),
    'latin1',
  );
}

/** A guest connection being served. */
interface GuestConnection extends UpstreamTarget {
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
  /** The roots upstream certificates are verified against, built once. */
  private readonly upstreamTrust: tls.SecureContext;
  private readonly connections = new WeakMap<net.Socket, GuestConnection>();
  /** Everything `close` must destroy: guest sockets (raw and TLS), upgraded upstream sockets, upstream requests. */
  private readonly open = new Set<{ destroy(): unknown }>();
  private readonly handling = new Set<Promise<InterceptedConnection>>();

  constructor(private readonly options: TlsInterceptorOptions) {
    this.upstreamTrust = upstreamTrust(options.upstreamCa);
    this.agent = new https.Agent({ keepAlive: true });
    this.server = http.createServer();
    // Whatever goes wrong with one request ends that request's connection, never the process.
    this.server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => void this.forward(req, res).catch(() => res.destroy()));
    this.server.on(
      'upgrade',
      (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => void this.forwardUpgrade(req, socket, head).catch(() => socket.destroy()),
    );
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

  /**
   * Calls `rewrite`; null (after answering the guest) when it refused or failed, or when the request is not for
   * the connection's name (421 Misdirected Request: a client opens a new connection for another name).
   */
  private async rewritten(
    connection: GuestConnection,
    req: http.IncomingMessage,
    refuse: (text: string, status?: number) => void,
  ): Promise<RewrittenRequest | null> {
    const target = req.url ?? '/';
    const misdirected = misdirection(connection.name, target, req.rawHeaders);
    let rewritten: RewrittenRequest;
    try {
      rewritten = await this.options.rewrite({
        name: connection.name,
        method: req.method ?? 'GET',
        path: originForm(target),
        rawHeaders: [...req.rawHeaders],
        ...(misdirected ? { misdirected } : {}),
      });
    } catch (error) {
      refuse(`sandboxd vault: the request to ${connection.name} was not forwarded: ${(error as Error).message}`);
      return null;
    }
    if (!misdirected) return rewritten;
    onceDone(rewritten.done)(421);
    refuse(
      `sandboxd vault: this TLS connection is for ${connection.name} and ${misdirected}: the request was not forwarded (open a connection for the other name)`,
      421,
    );
    return null;
  }

  /** Starts an upstream request; null (after answering the guest) when the rewritten request is not valid HTTP (a CR or LF in a header, say). */
  private request(
    connection: GuestConnection,
    options: https.RequestOptions,
    done: (status: number | null, error?: Error) => void,
    refuse: (text: string) => void,
  ): http.ClientRequest | null {
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

  private async forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const connection = this.connections.get(req.socket);
    if (!connection) return void res.destroy();
    connection.stats.requests++;
    const refuse = (text: string, status = 502) => {
      if (res.headersSent) return void res.destroy();
      const body = `${text}\n`;
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), 'x-sandboxd-vault': 'not-forwarded' });
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
    const method = req.method ?? 'GET';
    const headers = upstreamHeaders(connection, rewritten, framing);
    const upstream = this.request(
      connection,
      { ...upstreamOptions(connection, this.upstreamTrust, method, rewritten.path, headers), agent: this.agent },
      done,
      refuse,
    );
    if (!upstream) return;
    limitConnect(upstream, this.options.connectTimeoutMs ?? 10_000);

    upstream.on('response', (answer: http.IncomingMessage) => {
      const status = answer.statusCode ?? 502;
      const scrubbed = scrubbedAnswer(rewritten.scrubber, method, status, endToEndHeaders(answer.rawHeaders));
      if (!scrubbed) {
        done(502, new Error(`the answer's Content-Encoding (${headerValue(answer.rawHeaders, 'content-encoding')}) cannot be decoded to check it for secrets`));
        refuse(`sandboxd vault: ${connection.name} answered with a Content-Encoding sandboxd cannot decode to check it for secrets: not relayed`);
        // Its connection cannot be reused with an unread body in it; the refusal above is already the guest's answer.
        upstream.removeAllListeners('error').on('error', () => undefined);
        return void upstream.destroy();
      }
      done(status);
      res.sendDate = false; // the upstream's Date header is passed on
      res.writeHead(status, rewritten.scrubber?.active ? rewritten.scrubber.text(answer.statusMessage ?? '') : answer.statusMessage, scrubbed.rawHeaders);
      if (scrubbed.stages.length === 0) {
        answer.pipe(res);
        answer.on('error', () => res.destroy());
      } else pipeline([answer, ...scrubbed.stages, res], () => undefined);
    });
    upstream.on('error', (error: Error) => {
      done(null, error);
      // Before the answer began the guest is told why; after, only a cut connection can tell it the body is short.
      if (res.headersSent) res.destroy();
      else refuse(describeUpstreamError(error, connection));
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
    const rewritten = await this.rewritten(connection, req, (text, status = 502) =>
      endRawWithText(socket, status, status === 421 ? 'Misdirected Request' : 'Bad Gateway', text),
    );
    if (!rewritten) return;
    const done = onceDone(rewritten.done);
    if (socket.destroyed) return done(null, new Error('the client went away before the request was sent'));

    const protocol = req.headers.upgrade ?? '';
    const method = req.method ?? 'GET';
    const scrubber = rewritten.scrubber?.active ? rewritten.scrubber : null;
    const headers = upstreamHeaders(connection, rewritten, ['Connection', 'Upgrade', 'Upgrade', protocol]);
    // Its own connection, not the agent's: an upgraded socket never returns to a pool.
    const upstream = this.request(
      connection,
      { ...upstreamOptions(connection, this.upstreamTrust, req.method ?? 'GET', rewritten.path, headers), agent: false },
      done,
      (text) => endRawWithText(socket, 502, 'Bad Gateway', text),
    );
    if (!upstream) return;
    limitConnect(upstream, this.options.connectTimeoutMs ?? 10_000);

    upstream.on('upgrade', (answer: http.IncomingMessage, upstreamSocket: net.Socket, upstreamHead: Buffer) => {
      this.track(upstreamSocket);
      // Compressed frames cannot be searched: an extension the guest was not allowed to offer ends the connection.
      if (scrubber && headerValue(answer.rawHeaders, 'sec-websocket-extensions') !== undefined) {
        done(null, new Error('the upstream accepted a WebSocket extension that was not offered'));
        upstreamSocket.destroy();
        return endRawWithText(
          socket,
          502,
          'Bad Gateway',
          `sandboxd vault: ${connection.name} turned on a WebSocket extension (compression) sandboxd did not offer: not relayed`,
        );
      }
      done(answer.statusCode ?? 101);
      // The 101's headers (Connection, Upgrade, Sec-WebSocket-Accept) belong to the upgrade and go through (masked).
      const rawHeaders = scrubber ? answer.rawHeaders.map((item) => scrubber.text(item)) : answer.rawHeaders;
      socket.write(
        responseHead(
          answer.statusCode ?? 101,
          scrubber ? scrubber.text(answer.statusMessage ?? 'Switching Protocols') : (answer.statusMessage ?? 'Switching Protocols'),
          rawHeaders,
        ),
      );
      if (head.length) upstreamSocket.write(head);
      upstreamSocket.on('error', () => socket.destroy());
      socket.on('error', () => upstreamSocket.destroy());
      socket.once('close', () => upstreamSocket.destroy());
      socket.pipe(upstreamSocket);
      // Server-to-guest bytes are masked in place (the same length keeps WebSocket frame lengths true). The
      // bytes the scrubber holds back are flushed when the upstream closes: the guest's side is then ended, not cut.
      const toGuest = scrubber ? scrubber.stream() : null;
      if (toGuest) {
        toGuest.on('error', () => socket.destroy());
        if (upstreamHead.length) toGuest.write(upstreamHead);
        upstreamSocket.once('close', () => toGuest.end());
        upstreamSocket.pipe(toGuest).pipe(socket);
      } else {
        upstreamSocket.once('close', () => socket.destroy());
        if (upstreamHead.length) socket.write(upstreamHead);
        upstreamSocket.pipe(socket);
      }
    });
    // The server declined the upgrade: its answer is relayed and the connection closed (it cannot carry more).
    upstream.on('response', (answer: http.IncomingMessage) => {
      const status = answer.statusCode ?? 502;
      const scrubbed = scrubbedAnswer(rewritten.scrubber, method, status, endToEndHeaders(answer.rawHeaders, { add: ['Connection', 'close'] }));
      if (!scrubbed) {
        done(502, new Error(`the answer's Content-Encoding (${headerValue(answer.rawHeaders, 'content-encoding')}) cannot be decoded to check it for secrets`));
        endRawWithText(
          socket,
          502,
          'Bad Gateway',
          `sandboxd vault: ${connection.name} answered with a Content-Encoding sandboxd cannot decode to check it for secrets: not relayed`,
        );
        upstream.removeAllListeners('error').on('error', () => undefined);
        return void upstream.destroy();
      }
      done(status);
      socket.write(responseHead(status, scrubber ? scrubber.text(answer.statusMessage ?? '') : (answer.statusMessage ?? ''), scrubbed.rawHeaders));
      if (scrubbed.stages.length === 0) {
        answer.pipe(socket);
        answer.on('error', () => socket.destroy());
      } else pipeline([answer, ...scrubbed.stages, socket], () => undefined);
    });
    upstream.on('error', (error: Error) => {
      done(null, error);
      if (socket.writable) endRawWithText(socket, 502, 'Bad Gateway', describeUpstreamError(error, connection));
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
