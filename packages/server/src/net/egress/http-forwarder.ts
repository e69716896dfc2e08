/**
 * The plain-HTTP step of the egress proxy: every request on a guest's port-80 connection is checked on its own
 * and forwarded on its own. Deciding once per connection on the first Host would let a second keep-alive
 * request, a pipelined one or an absolute-form target reach any other name served at the same (shared) address.
 *
 * Node's HTTP machinery parses both sides, as the vault's TLS interceptor does (`tls-interceptor.ts`): a private,
 * never listening `http.Server` reads the guest's requests (keep-alive, pipelining, chunked and content-length
 * bodies, strict framing: a request it cannot frame is refused, never passed on as bytes), and each request asks
 * `decide` for its Host, then goes to the address pinned for that name over a connection of sandboxd's own
 * (`http.request`, kept alive per address). WebSocket and other upgrades are checked like any request; once the
 * upstream switched protocols, the connection carries that protocol and no more HTTP requests. CONNECT is
 * refused: it would tunnel to a destination of the guest's choosing.
 */
import http from 'node:http';
import net from 'node:net';
import type { EgressDecision, EgressRequest, ProxiedConnection } from './proxied-connection.ts';
import { endToEndHeaders, responseHead } from './http-relay-headers.ts';

export interface HttpForwarderOptions {
  decide(request: EgressRequest): Promise<EgressDecision>;
  /** One finished request, allowed or refused. */
  record(request: ProxiedConnection): void;
  /** How long a client has to send its first request head. */
  firstBytesTimeoutMs?: number;
  /** How long connecting to the upstream may take. */
  connectTimeoutMs?: number;
  /** The upstream's port: 80, the port the guest's connection was redirected from (tests choose another). */
  upstreamPort?: number;
}

/** Splits a Host value into a name or an IP literal (the port is dropped: the redirect was from port 80). */
export function hostParts(host: string): { name: string | null; literalAddress: string | null } {
  const lower = host.trim().toLowerCase();
  const bare = lower.startsWith('[') ? lower.slice(1, lower.indexOf(']')) : lower.replace(/:\d*$/, '');
  const clean = bare.replace(/\.$/, '');
  if (net.isIP(clean)) return { name: null, literalAddress: clean };
  return { name: /^[a-z0-9._-]{1,253}$/.test(clean) ? clean : null, literalAddress: null };
}

/**
 * What a request asks for: the Host it names and the origin-form path to send upstream, or why it is refused.
 * An absolute-form target (`GET http://x/ HTTP/1.1`) must name the same host as the Host header (RFC 9112 §3.2.2
 * lets the origin route on the target, so a foreign authority would reach another name); it goes on in origin form.
 */
export function requestTarget(url: string, rawHeaders: readonly string[]): { host: string | null; path: string } | { host: string | null; refused: string } {
  const hosts: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === 'host') hosts.push(rawHeaders[i + 1]!);
  const host = hosts[0]?.trim() || null;
  if (hosts.length > 1) return { host, refused: 'more than one Host header' };
  if (url.startsWith('/') || url === '*') return { host, path: url };
  if (!/^https?:\/\//i.test(url)) return { host, refused: `the request target ${JSON.stringify(url.slice(0, 100))} is neither a path nor an http:// URL` };
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return { host, refused: 'the absolute-form request target is not a URL' };
  }
  if (target.protocol !== 'http:') return { host, refused: `an absolute-form ${target.protocol}// target on the HTTP port` };
  if (target.username || target.password) return { host, refused: 'the absolute-form target carries credentials' };
  const authority = hostParts(target.host);
  const named = host ? hostParts(host) : null;
  const same =
    named && (authority.name ?? authority.literalAddress) !== null && authority.name === named.name && authority.literalAddress === named.literalAddress;
  if (!same) return { host, refused: `the absolute-form target names ${target.hostname}, the Host header ${host ?? 'nothing'}` };
  return { host, path: `${target.pathname}${target.search}` };
}

/** The bytes of a request head as the guest sent it (for the vault's placeholder scan). */
function headBytes(req: http.IncomingMessage): Buffer {
  let head = `${req.method} ${req.url} HTTP/${req.httpVersion}\r\n`;
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) head += `${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}\r\n`;
  return Buffer.from(`${head}\r\n`, 'latin1');
}

/** sandboxd's own refusal text (a 403 the guest can read) and the headers that mark it. */
function refusalText(request: EgressRequest, reason: string): string {
  return `sandboxd: the egress policy of this VM refuses ${request.name ?? request.literalAddress ?? 'this request'} (${reason})\n`;
}

/** One request being forwarded: what it asked for and what it moved, recorded once. */
interface Exchange {
  request: EgressRequest;
  address: string | null;
  startedAt: Date;
  bytesSent: number;
  bytesReceived: number;
  recorded: boolean;
}

/** Checks and forwards the HTTP requests of one VM's port-80 connections. */
export class HttpForwarder {
  /** Never listens: guest connections are handed to it with `emit('connection')`. */
  private readonly server: http.Server;
  /** Upstream connections, kept alive per pinned address (each request still names its own Host). */
  private readonly agent = new http.Agent({ keepAlive: true, maxFreeSockets: 8, timeout: 60_000 });
  private readonly open = new Set<{ destroy(): unknown }>();

  constructor(private readonly options: HttpForwarderOptions) {
    // requestTimeout off: a large upload may take long. Idle keep-alive connections close after the default 5 s.
    this.server = http.createServer({ requestTimeout: 0 });
    this.server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => void this.forward(req, res).catch(() => res.destroy()));
    this.server.on(
      'upgrade',
      (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => void this.forwardUpgrade(req, socket, head).catch(() => socket.destroy()),
    );
    this.server.on('connect', (req: http.IncomingMessage, socket: net.Socket) => {
      const request: EgressRequest = { scheme: 'http', port: 80, ...hostParts(req.url ?? '') };
      this.refuseRaw(socket, request, 'CONNECT is not proxied (it would tunnel to any destination)', 405, 'Method Not Allowed');
    });
    this.server.on('clientError', (error: NodeJS.ErrnoException, socket: net.Socket) => {
      // Not HTTP/1.x the parser can frame (TLS on port 80, HTTP/2 prior knowledge, smuggling attempts): nothing is forwarded.
      if (error.code?.startsWith('HPE_')) {
        this.options.record({
          request: { scheme: 'http', port: 80, name: null, literalAddress: null },
          address: null,
          verdict: 'refused',
          reason: `not an HTTP/1.1 request sandboxd can read (${error.code ?? error.message})`,
          bytesSent: 0,
          bytesReceived: 0,
          startedAt: new Date(),
        });
      }
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\nx-sandboxd-egress: refused\r\n\r\n');
      socket.destroy();
    });
  }

  /** Takes over a guest connection to port 80 (nothing read from it yet). */
  handle(socket: net.Socket): void {
    this.track(socket);
    // The first request head must come in time; from then on Node's keep-alive timeout governs idle connections.
    socket.setTimeout(this.options.firstBytesTimeoutMs ?? 10_000, () => socket.destroy());
    this.server.emit('connection', socket);
  }

  private track(item: { destroy(): unknown; once(event: 'close', listener: () => void): unknown }): void {
    this.open.add(item);
    item.once('close', () => this.open.delete(item));
  }

  private finish(exchange: Exchange, verdict: 'allowed' | 'refused', reason: string | null): void {
    if (exchange.recorded) return;
    exchange.recorded = true;
    const { request, address, startedAt, bytesSent, bytesReceived } = exchange;
    this.options.record({ request, address, verdict, reason, bytesSent: verdict === 'allowed' ? bytesSent : 0, bytesReceived, startedAt });
  }

  /** Reads a request's target and asks `decide`; the refusal reason when it may not go on. */
  private async check(req: http.IncomingMessage): Promise<{ exchange: Exchange; path: string; decision: EgressDecision }> {
    req.socket.setTimeout(0);
    const startedAt = new Date();
    const target = requestTarget(req.url ?? '/', req.rawHeaders);
    const parts = target.host ? hostParts(target.host) : { name: null, literalAddress: null };
    const request: EgressRequest = { scheme: 'http', port: 80, ...parts };
    const exchange: Exchange = { request, address: null, startedAt, bytesSent: 0, bytesReceived: 0, recorded: false };
    if ('refused' in target) return { exchange, path: '/', decision: { allowed: false, reason: target.refused } };
    let decision: EgressDecision;
    try {
      decision = await this.options.decide(request);
    } catch (error) {
      decision = { allowed: false, reason: `could not resolve: ${(error as Error).message}` };
    }
    return { exchange, path: target.path, decision };
  }

  /** Starts the upstream request; null (the guest answered 502) when the request is not valid HTTP to send. */
  private upstreamRequest(exchange: Exchange, address: string, options: http.RequestOptions, fail: (text: string) => void): http.ClientRequest | null {
    let upstream: http.ClientRequest;
    try {
      upstream = http.request({ ...options, host: address, port: this.options.upstreamPort ?? exchange.request.port, setHost: false });
    } catch (error) {
      fail(`sandboxd: the request could not be sent on: ${(error as Error).message}`);
      return null;
    }
    this.track(upstream);
    const timeoutMs = this.options.connectTimeoutMs ?? 10_000;
    upstream.once('socket', (socket: net.Socket) => {
      if (upstream.reusedSocket || !socket.connecting) return;
      const timer = setTimeout(() => upstream.destroy(new Error(`no connection after ${timeoutMs} ms`)), timeoutMs);
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    return upstream;
  }

  private async forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const { exchange, path, decision } = await this.check(req);
    const { request } = exchange;
    if (!decision.allowed) {
      this.finish(exchange, 'refused', decision.reason);
      const body = refusalText(request, decision.reason);
      // The connection ends with the refusal: what else the guest pipelined on it is not read.
      res.writeHead(403, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body), connection: 'close', 'x-sandboxd-egress': 'refused' });
      res.end(body);
      req.resume();
      return;
    }
    exchange.address = decision.address;
    const head = headBytes(req);
    exchange.bytesSent = head.length;
    decision.inspect?.(head);
    req.on('data', (chunk: Buffer) => {
      exchange.bytesSent += chunk.length;
      decision.inspect?.(chunk);
    });
    const fail = (text: string) => {
      if (res.headersSent) return void res.destroy();
      const body = `${text}\n`;
      res.writeHead(502, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body), 'x-sandboxd-egress': 'upstream-failed' });
      res.end(body);
    };
    // Node's parser removed the guest's chunked framing: the upstream request is framed anew. Expect was answered here.
    const framing = req.headers['transfer-encoding'] !== undefined ? ['Transfer-Encoding', 'chunked'] : [];
    const headers = endToEndHeaders(req.rawHeaders, { add: framing, drop: ['expect'] });
    const upstream = this.upstreamRequest(exchange, decision.address, { method: req.method ?? 'GET', path, headers, agent: this.agent }, fail);
    if (!upstream) return void this.finish(exchange, 'refused', 'not valid HTTP to send on');
    upstream.on('response', (answer: http.IncomingMessage) => {
      res.sendDate = false; // the upstream's Date header is passed on
      exchange.bytesReceived += answer.rawHeaders.reduce((sum, part) => sum + part.length + 2, 16);
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEndHeaders(answer.rawHeaders));
      answer.on('data', (chunk: Buffer) => (exchange.bytesReceived += chunk.length));
      answer.pipe(res);
      answer.on('error', () => res.destroy());
    });
    upstream.on('error', (error: Error) => {
      if (!res.headersSent) this.finish(exchange, 'refused', `upstream unreachable: ${error.message}`);
      fail(`sandboxd: could not reach ${request.name ?? decision.address} (${decision.address}:${request.port}): ${error.message}`);
    });
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
      this.finish(exchange, 'allowed', null);
    });
    req.pipe(upstream);
  }

  private async forwardUpgrade(req: http.IncomingMessage, socket: net.Socket, head: Buffer): Promise<void> {
    const { exchange, path, decision } = await this.check(req);
    if (!decision.allowed) return this.refuseRaw(socket, exchange.request, decision.reason, 403, 'Forbidden', exchange);
    exchange.address = decision.address;
    const requestHead = headBytes(req);
    exchange.bytesSent = requestHead.length + head.length;
    decision.inspect?.(requestHead);
    const fail = (text: string) => {
      const body = `${text}\n`;
      if (socket.writable)
        socket.end(`HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
      else socket.destroy();
    };
    const protocol = req.headers.upgrade ?? '';
    const headers = endToEndHeaders(req.rawHeaders, { add: ['Connection', 'Upgrade', 'Upgrade', protocol] });
    // Its own connection, not the agent's: an upgraded socket never returns to a pool.
    const upstream = this.upstreamRequest(exchange, decision.address, { method: req.method ?? 'GET', path, headers, agent: false }, fail);
    if (!upstream) return void this.finish(exchange, 'refused', 'not valid HTTP to send on');
    upstream.on('upgrade', (answer: http.IncomingMessage, upstreamSocket: net.Socket, upstreamHead: Buffer) => {
      this.track(upstreamSocket);
      // The 101's own headers (Connection, Upgrade, Sec-WebSocket-Accept) belong to the upgrade and go through.
      socket.write(responseHead(answer.statusCode ?? 101, answer.statusMessage ?? 'Switching Protocols', answer.rawHeaders));
      if (upstreamHead.length) socket.write(upstreamHead);
      if (head.length) upstreamSocket.write(head);
      socket.on('data', (chunk: Buffer) => {
        exchange.bytesSent += chunk.length;
        decision.inspect?.(chunk);
      });
      upstreamSocket.on('data', (chunk: Buffer) => (exchange.bytesReceived += chunk.length));
      upstreamSocket.on('error', () => socket.destroy());
      socket.on('error', () => upstreamSocket.destroy());
      upstreamSocket.once('close', () => socket.destroy());
      socket.once('close', () => {
        upstreamSocket.destroy();
        this.finish(exchange, 'allowed', null);
      });
      socket.pipe(upstreamSocket);
      upstreamSocket.pipe(socket);
    });
    // The server declined the upgrade: its answer is relayed and the connection closed (it must not carry more).
    upstream.on('response', (answer: http.IncomingMessage) => {
      socket.write(responseHead(answer.statusCode ?? 502, answer.statusMessage ?? '', endToEndHeaders(answer.rawHeaders, { add: ['Connection', 'close'] })));
      answer.on('data', (chunk: Buffer) => (exchange.bytesReceived += chunk.length));
      answer.pipe(socket);
      answer.on('error', () => socket.destroy());
      answer.once('end', () => this.finish(exchange, 'allowed', null));
    });
    upstream.on('error', (error: Error) => {
      this.finish(exchange, 'refused', `upstream unreachable: ${error.message}`);
      fail(`sandboxd: could not reach ${exchange.request.name ?? decision.address} (${decision.address}:80): ${error.message}`);
    });
    socket.once('close', () => upstream.destroy());
    upstream.end();
  }

  /** Answers a handed-over socket with sandboxd's refusal and closes it. */
  private refuseRaw(socket: net.Socket, request: EgressRequest, reason: string, status: number, statusMessage: string, exchange?: Exchange): void {
    if (exchange) this.finish(exchange, 'refused', reason);
    else this.options.record({ request, address: null, verdict: 'refused', reason, bytesSent: 0, bytesReceived: 0, startedAt: new Date() });
    const body = refusalText(request, reason);
    if (socket.writable)
      socket.end(
        `HTTP/1.1 ${status} ${statusMessage}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\nx-sandboxd-egress: refused\r\n\r\n${body}`,
      );
    else socket.destroy();
  }

  /** Destroys every connection it holds. */
  async close(): Promise<void> {
    for (const item of this.open) item.destroy();
    this.agent.destroy();
  }
}
