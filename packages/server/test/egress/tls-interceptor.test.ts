/**
 * The vault's TLS interception against real things on 127.0.0.1: a real HTTPS (and WebSocket) upstream with a
 * certificate from a throwaway CA, a front that reads the ClientHello exactly as the egress proxy does before
 * handing the paused socket over, and Node's own TLS, HTTPS and `ws` clients trusting the vault's CA.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import type http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import zlib from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { WebSocket, WebSocketServer, type ClientOptions } from 'ws';
import { createCertificateAuthority, LeafCertificates } from '../../src/net/egress/certificate-authority.ts';
import type { CaMaterial, InterceptedRequest } from '../../src/core/vault/vault-ports.ts';
import { parseClientHello } from '../../src/net/egress/tls-client-hello.ts';
import { ResponseScrubber } from '../../src/core/vault/response-scrubber.ts';
import { TlsInterceptor, type InterceptedConnection, type TlsInterceptorOptions } from '../../src/net/egress/tls-interceptor.ts';
import { misdirection } from '../../src/net/egress/intercepted-request-target.ts';
import { createTestCa, type TestCa } from '../helpers/test-ca.ts';

const NAME = 'api.test';
const PLACEHOLDER = 'sbxv_0123456789abcdef';
const SECRET = 'real-secret-value';

interface Echo {
  method: string;
  url: string;
  rawHeaders: string[];
  length: number;
  sha256: string;
}

/** A front like the egress proxy's HTTPS listener: reads the ClientHello, leaves the socket paused, hands it over. */
interface Front {
  port: number;
  connections: Promise<InterceptedConnection>[];
  close(): Promise<void>;
}

async function startFront(interceptor: TlsInterceptor, upstream: () => { address: string; port: number }, pauseMs = 0): Promise<Front> {
  const connections: Promise<InterceptedConnection>[] = [];
  const server = net.createServer((socket) => {
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const hello = parseClientHello(head);
      if (hello.kind === 'incomplete') return;
      socket.off('data', onData);
      socket.pause();
      const { address, port } = upstream();
      const handOver = () => interceptor.handle(socket, head, hello.kind === 'hello' ? (hello.serverName ?? '') : '', address, port);
      connections.push(pauseMs ? new Promise((resolve) => setTimeout(resolve, pauseMs)).then(handOver) : handOver());
    };
    socket.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface Response {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  reusedSocket: boolean;
}

/** One request through the front as a guest makes it: to 127.0.0.1, SNI `servername`, trusting the vault CA. */
function request(
  port: number,
  ca: CaMaterial,
  options: {
    path?: string;
    method?: string;
    headers?: http.OutgoingHttpHeaders;
    body?: (req: http.ClientRequest) => void;
    agent?: https.Agent;
    servername?: string;
  } = {},
): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        servername: options.servername ?? NAME,
        ca: [ca.certPem],
        method: options.method ?? 'GET',
        path: options.path ?? '/',
        headers: { host: options.servername ?? NAME, ...options.headers },
        agent: options.agent ?? false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), reusedSocket: req.reusedSocket }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (options.body) options.body(req);
    else req.end();
  });
}

function headerValues(rawHeaders: string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === name) values.push(rawHeaders[i + 1]!);
  return values;
}

/** Swaps the placeholder for the secret in the path and every header value; records what it saw and how it ended. */
function placeholderRewriter() {
  const seen: InterceptedRequest[] = [];
  const outcomes: { status: number | null; error?: Error }[] = [];
  const rewrite: TlsInterceptorOptions['rewrite'] = (request) => {
    seen.push(request);
    return {
      path: request.path.replaceAll(PLACEHOLDER, SECRET),
      rawHeaders: request.rawHeaders.map((value, i) => (i % 2 === 1 ? value.replaceAll(PLACEHOLDER, SECRET) : value)),
      done: (status, error) => outcomes.push(error ? { status, error } : { status }),
    };
  };
  return { seen, outcomes, rewrite };
}

/** A number of bytes that differ from one another, so that a reordered or dropped chunk changes the hash. */
function patternBytes(length: number): Buffer {
  const bytes = Buffer.alloc(length);
  for (let i = 0; i < length; i++) bytes[i] = (i * 31 + (i >> 8)) & 0xff;
  return bytes;
}

async function waitFor(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('TLS interception for the vault', () => {
  let ca: CaMaterial;
  let leafs: LeafCertificates;
  let upstreamCa: TestCa;
  let upstream: https.Server;
  let upstreamPort: number;
  let wss: WebSocketServer;
  const upgradeHeaders: http.IncomingHttpHeaders[] = [];
  const toUpstream = () => ({ address: '127.0.0.1', port: upstreamPort });

  before(async () => {
    ca = await createCertificateAuthority('sandboxd test vault CA');
    leafs = new LeafCertificates(ca);
    upstreamCa = await createTestCa([NAME]);
    upstream = https.createServer({ key: fs.readFileSync(upstreamCa.keyPath), cert: fs.readFileSync(upstreamCa.certPath) }, (req, res) => {
      const reflect = /^\/reflect\/(gzip|br|deflate|zstd|identity)$/.exec(req.url ?? '');
      if (reflect) {
        // Echoes the Authorization header everywhere it can, compressed whatever the client accepts.
        const auth = req.headers.authorization ?? '';
        const body = Buffer.from(JSON.stringify({ auth, basic: Buffer.from(auth).toString('base64'), accept: req.headers['accept-encoding'] ?? null }));
        const coding = reflect[1]!;
        const encoded =
          coding === 'gzip' ? zlib.gzipSync(body) : coding === 'br' ? zlib.brotliCompressSync(body) : coding === 'deflate' ? zlib.deflateSync(body) : body;
        res.writeHead(200, `OK ${auth}`, {
          'content-type': 'application/json',
          'x-echo': auth,
          location: `https://x.test/${encodeURIComponent(auth)}`,
          'content-length': encoded.length,
          ...(coding === 'identity' ? {} : { 'content-encoding': coding }),
        });
        return void res.end(encoded);
      }
      if (req.url?.startsWith('/download/')) {
        // A chunked answer of the given size, written in 64 KiB pieces.
        const size = Number(req.url.slice('/download/'.length));
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const body = patternBytes(size);
        for (let at = 0; at < size; at += 65_536) res.write(body.subarray(at, at + 65_536));
        return void res.end();
      }
      const hash = crypto.createHash('sha256');
      let length = 0;
      req.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        length += chunk.length;
      });
      req.on('end', () => {
        const echo: Echo = { method: req.method ?? '', url: req.url ?? '', rawHeaders: req.rawHeaders, length, sha256: hash.digest('hex') };
        res.writeHead(200, { 'content-type': 'application/json', 'x-upstream': 'echo' });
        res.end(JSON.stringify(echo));
      });
    });
    wss = new WebSocketServer({ server: upstream });
    wss.on('connection', (socket, req) => {
      upgradeHeaders.push({ ...req.headers, path: req.url });
      socket.on('message', (data) => socket.send(`echo: ${String(data)} ${req.headers.authorization ?? ''}`));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamPort = (upstream.address() as net.AddressInfo).port;
  });

  after(async () => {
    wss.close();
    upstream.closeAllConnections();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
    upstreamCa.remove();
  });

  /** An interceptor trusting the upstream's CA, its front, and the rewriter's records; closed after `body`. */
  async function withInterceptor(
    body: (context: { front: Front; rewriter: ReturnType<typeof placeholderRewriter>; interceptor: TlsInterceptor }) => Promise<void>,
    options: Partial<TlsInterceptorOptions> & { target?: () => { address: string; port: number }; pauseMs?: number } = {},
  ): Promise<void> {
    const rewriter = placeholderRewriter();
    const interceptor = new TlsInterceptor({ leafs, upstreamCa: [fs.readFileSync(upstreamCa.caCertPath, 'utf8')], rewrite: rewriter.rewrite, ...options });
    const front = await startFront(interceptor, options.target ?? toUpstream, options.pauseMs);
    try {
      await body({ front, rewriter, interceptor });
    } finally {
      await interceptor.close();
      await front.close();
    }
  }

  test('the ClientHello read by the egress step is put back: the handshake completes on the paused socket', async () => {
    await withInterceptor(
      async ({ front }) => {
        const response = await request(front.port, ca, { path: '/hello' });
        assert.equal(response.status, 200);
        assert.equal((JSON.parse(response.body.toString()) as Echo).url, '/hello');
      },
      // The socket sits paused, with the hello already read off it, for a while before it is handed over.
      { pauseMs: 100 },
    );
  });

  test('a header and the path are rewritten, hop-by-hop headers are not passed on, and done gets the status', async () => {
    await withInterceptor(async ({ front, rewriter }) => {
      const response = await request(front.port, ca, {
        path: `/v1/items?key=${PLACEHOLDER}`,
        headers: {
          authorization: `Bearer ${PLACEHOLDER}`,
          'x-kept': 'yes',
          connection: 'keep-alive, x-hop',
          'x-hop': 'for this connection only',
          'proxy-authorization': 'Basic eA==',
        },
      });
      assert.equal(response.status, 200);
      assert.equal(response.headers['x-upstream'], 'echo');
      const echo = JSON.parse(response.body.toString()) as Echo;
      assert.equal(echo.url, `/v1/items?key=${SECRET}`);
      assert.deepEqual(headerValues(echo.rawHeaders, 'authorization'), [`Bearer ${SECRET}`]);
      assert.deepEqual(headerValues(echo.rawHeaders, 'x-kept'), ['yes']);
      // Host is the connection's name (with its port, which is not 443 here), whatever the guest sent.
      assert.deepEqual(headerValues(echo.rawHeaders, 'host'), [`${NAME}:${upstreamPort}`]);
      assert.deepEqual(headerValues(echo.rawHeaders, 'x-hop'), []);
      assert.deepEqual(headerValues(echo.rawHeaders, 'proxy-authorization'), []);
      assert.ok(!response.body.includes(PLACEHOLDER));

      assert.equal(rewriter.seen.length, 1);
      assert.equal(rewriter.seen[0]!.name, NAME);
      assert.equal(rewriter.seen[0]!.method, 'GET');
      assert.equal(rewriter.seen[0]!.path, `/v1/items?key=${PLACEHOLDER}`);
      assert.deepEqual(headerValues(rewriter.seen[0]!.rawHeaders, 'authorization'), [`Bearer ${PLACEHOLDER}`]);
      assert.deepEqual(rewriter.outcomes, [{ status: 200 }]);
    });
  });

  test('keep-alive: two requests on one guest connection are both rewritten', async () => {
    await withInterceptor(async ({ front, rewriter }) => {
      const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const first = await request(front.port, ca, { path: `/one/${PLACEHOLDER}`, agent });
        const second = await request(front.port, ca, { path: '/two', headers: { 'x-api-key': PLACEHOLDER }, agent });
        assert.equal(first.reusedSocket, false);
        assert.equal(second.reusedSocket, true);
        assert.equal((JSON.parse(first.body.toString()) as Echo).url, `/one/${SECRET}`);
        assert.deepEqual(headerValues((JSON.parse(second.body.toString()) as Echo).rawHeaders, 'x-api-key'), [SECRET]);
      } finally {
        agent.destroy();
      }
      assert.equal(front.connections.length, 1);
      const connection = await front.connections[0]!;
      assert.equal(connection.requests, 2);
      assert.equal(connection.error, null);
      assert.deepEqual(rewriter.outcomes, [{ status: 200 }, { status: 200 }]);
    });
  });

  test('a 1 MiB POST body streams through with content-length, and another chunked; a 1 MiB answer streams back', async () => {
    await withInterceptor(async ({ front }) => {
      const body = patternBytes(1024 * 1024);
      const sha256 = crypto.createHash('sha256').update(body).digest('hex');
      const withLength = await request(front.port, ca, {
        method: 'POST',
        path: '/upload',
        headers: { 'content-length': body.length, 'content-type': 'application/octet-stream' },
        body: (req) => req.end(body),
      });
      const withLengthEcho = JSON.parse(withLength.body.toString()) as Echo;
      assert.equal(withLengthEcho.length, body.length);
      assert.equal(withLengthEcho.sha256, sha256);
      assert.deepEqual(headerValues(withLengthEcho.rawHeaders, 'content-length'), [String(body.length)]);
      assert.deepEqual(headerValues(withLengthEcho.rawHeaders, 'transfer-encoding'), []);

      const chunked = await request(front.port, ca, {
        method: 'POST',
        path: '/upload',
        body: (req) => {
          // Written in pieces with pauses, so the upstream sees the body arrive before the guest has sent it all.
          let at = 0;
          const next = () => {
            if (at >= body.length) return void req.end();
            req.write(body.subarray(at, at + 100_000));
            at += 100_000;
            setTimeout(next, 2);
          };
          next();
        },
      });
      const chunkedEcho = JSON.parse(chunked.body.toString()) as Echo;
      assert.equal(chunkedEcho.length, body.length);
      assert.equal(chunkedEcho.sha256, sha256);
      assert.deepEqual(headerValues(chunkedEcho.rawHeaders, 'transfer-encoding'), ['chunked']);

      const download = await request(front.port, ca, { path: `/download/${body.length}` });
      assert.equal(download.status, 200);
      assert.equal(download.headers['transfer-encoding'], 'chunked');
      assert.ok(download.body.equals(body));
    });
  });

  test('bytes are the guest’s plaintext request and response bytes', async () => {
    await withInterceptor(async ({ front }) => {
      const requestBytes = `GET /count HTTP/1.1\r\nHost: ${NAME}\r\nConnection: close\r\n\r\n`;
      const responseBytes = await new Promise<Buffer>((resolve, reject) => {
        const socket = tls.connect({ host: '127.0.0.1', port: front.port, servername: NAME, ca: [ca.certPem] }, () => socket.write(requestBytes));
        const chunks: Buffer[] = [];
        socket.on('data', (chunk: Buffer) => chunks.push(chunk));
        socket.on('end', () => resolve(Buffer.concat(chunks)));
        socket.on('error', reject);
      });
      assert.match(responseBytes.toString('latin1'), /^HTTP\/1\.1 200 OK\r\n/);
      const connection = await front.connections[0]!;
      assert.equal(connection.bytesSent, Buffer.byteLength(requestBytes));
      assert.equal(connection.bytesReceived, responseBytes.length);
      assert.equal(connection.requests, 1);
    });
  });

  test('an upstream whose certificate is not trusted is answered 502 with the reason, and done gets the error', async () => {
    const rewriter = placeholderRewriter();
    // No upstreamCa: the upstream's throwaway CA is not among Node's roots.
    const interceptor = new TlsInterceptor({ leafs, rewrite: rewriter.rewrite });
    const front = await startFront(interceptor, toUpstream);
    try {
      const response = await request(front.port, ca, { headers: { authorization: `Bearer ${PLACEHOLDER}` } });
      assert.equal(response.status, 502);
      assert.match(response.headers['content-type'] ?? '', /^text\/plain/);
      assert.match(response.body.toString(), new RegExp(`^sandboxd vault: the upstream certificate is not valid for ${NAME.replace('.', '\\.')}: `));
      assert.ok(!response.body.includes(SECRET));
      assert.equal(rewriter.outcomes.length, 1);
      assert.equal(rewriter.outcomes[0]!.status, null);
      assert.ok(rewriter.outcomes[0]!.error instanceof Error);
    } finally {
      await interceptor.close();
      await front.close();
    }
  });

  test('an upstream certificate for another name, a refused connection and a silent upstream are 502s too', async () => {
    // The upstream's certificate names api.test only; the guest asked for other.test.
    await withInterceptor(async ({ front, rewriter }) => {
      const response = await request(front.port, ca, { servername: 'other.test' });
      assert.equal(response.status, 502);
      assert.match(response.body.toString(), /^sandboxd vault: the upstream certificate is not valid for other\.test: /);
      assert.equal(rewriter.outcomes[0]!.status, null);
    });

    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await withInterceptor(
      async ({ front, rewriter }) => {
        const response = await request(front.port, ca);
        assert.equal(response.status, 502);
        assert.match(response.body.toString(), /^sandboxd vault: could not reach api\.test \(127\.0\.0\.1:\d+\): .*ECONNREFUSED/);
        assert.equal((rewriter.outcomes[0]!.error as NodeJS.ErrnoException).code, 'ECONNREFUSED');
      },
      { target: () => ({ address: '127.0.0.1', port: closedPort }) },
    );

    // Accepts TCP but never answers the TLS handshake.
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      await withInterceptor(
        async ({ front, rewriter }) => {
          const started = Date.now();
          const response = await request(front.port, ca);
          assert.equal(response.status, 502);
          assert.match(response.body.toString(), /did not accept a TLS connection in time/);
          assert.ok(Date.now() - started < 2_000);
          assert.equal(rewriter.outcomes[0]!.status, null);
        },
        { target: () => ({ address: '127.0.0.1', port: (silent.address() as net.AddressInfo).port }), connectTimeoutMs: 300 },
      );
    } finally {
      silent.close();
    }
  });

  test('a rewrite that throws refuses the request with 502 and its message', async () => {
    await withInterceptor(
      async ({ front }) => {
        const response = await request(front.port, ca);
        assert.equal(response.status, 502);
        assert.equal(response.body.toString(), `sandboxd vault: the request to ${NAME} was not forwarded: no secret is bound to this host\n`);
      },
      {
        rewrite: () => {
          throw new Error('no secret is bound to this host');
        },
      },
    );
  });

  test('a rewrite that yields a header no HTTP request may carry is refused with 502, not a crash', async () => {
    const outcomes: (number | null)[] = [];
    await withInterceptor(
      async ({ front }) => {
        const response = await request(front.port, ca);
        assert.equal(response.status, 502);
        assert.match(response.body.toString(), /^sandboxd vault: the rewritten request to api\.test is not valid HTTP: /);
        assert.deepEqual(outcomes, [null]);
      },
      { rewrite: (r) => ({ path: r.path, rawHeaders: [...r.rawHeaders, 'x-injected', 'a\r\nb: c'], done: (status) => outcomes.push(status) }) },
    );
  });

  test('the guest sees a leaf for the name issued by the vault CA, and ALPN settles on http/1.1', async () => {
    await withInterceptor(async ({ front }) => {
      const connect = (ALPNProtocols: string[]) =>
        new Promise<tls.TLSSocket>((resolve, reject) => {
          const socket = tls.connect({ host: '127.0.0.1', port: front.port, servername: NAME, ca: [ca.certPem], ALPNProtocols }, () => resolve(socket));
          socket.on('error', reject);
        });
      const socket = await connect(['h2', 'http/1.1']);
      try {
        assert.equal(socket.authorized, true);
        assert.equal(socket.alpnProtocol, 'http/1.1');
        const peer = socket.getPeerX509Certificate()!;
        const caCert = new crypto.X509Certificate(ca.certPem);
        assert.equal(peer.subjectAltName, `DNS:${NAME}`);
        assert.equal(peer.subject, `CN=${NAME}`);
        assert.ok(peer.checkIssued(caCert));
        assert.ok(peer.verify(caCert.publicKey));
        assert.equal(peer.ca, false);
        assert.equal(caCert.ca, true);
        assert.ok(new Date(peer.validTo).getTime() - Date.now() > 6 * 24 * 3600_000);
      } finally {
        socket.destroy();
      }
      // A client offering HTTP/2 alone cannot be given HTTP/1.1 (ALPN lets a server pick only what was offered):
      // OpenSSL ends the handshake with no_application_protocol, which such a client treats as "no HTTP/2 here".
      await assert.rejects(connect(['h2']), /no application protocol|NO_APPLICATION_PROTOCOL/i);
      // A client offering no ALPN at all gets plain TLS and speaks HTTP/1.1.
      const plain = await connect([]);
      assert.equal(plain.alpnProtocol, false);
      plain.destroy();
    });
  });

  test('a WebSocket upgrade is rewritten and relays messages both ways', async () => {
    await withInterceptor(async ({ front, rewriter }) => {
      const before = upgradeHeaders.length;
      // ws hands its options to tls.connect, servername included (its types leave that one out).
      const options: ClientOptions & Pick<tls.ConnectionOptions, 'servername'> = {
        servername: NAME,
        ca: [ca.certPem],
        headers: { host: NAME, authorization: `Bearer ${PLACEHOLDER}` },
      };
      const ws = new WebSocket(`wss://127.0.0.1:${front.port}/socket?token=${PLACEHOLDER}`, options);
      try {
        await new Promise<void>((resolve, reject) => {
          ws.once('open', () => resolve());
          ws.once('error', reject);
        });
        const replies: string[] = [];
        ws.on('message', (data) => replies.push(String(data)));
        ws.send('one');
        ws.send('two');
        await waitFor(() => replies.length === 2);
        assert.deepEqual(replies, [`echo: one Bearer ${SECRET}`, `echo: two Bearer ${SECRET}`]);
        const seen = upgradeHeaders[before]!;
        assert.equal(seen.authorization, `Bearer ${SECRET}`);
        assert.equal(seen.path, `/socket?token=${SECRET}`);
        assert.equal(seen.upgrade, 'websocket');
        assert.deepEqual(rewriter.outcomes, [{ status: 101 }]);
      } finally {
        ws.close();
      }
      const connection = await front.connections[0]!;
      assert.equal(connection.requests, 1);
      assert.ok(connection.bytesSent > 0 && connection.bytesReceived > 0);
    });
  });

  test('a request whose Host or absolute-form target is another name is answered 421 and never forwarded', async () => {
    assert.equal(misdirection(NAME, '/x', ['Host', 'API.test.:443']), null);
    assert.equal(misdirection(NAME, 'https://api.test/x?y', ['Host', NAME]), null);
    assert.match(misdirection(NAME, '/x', ['Host', 'other.test']) ?? '', /Host is not api\.test/);
    assert.match(misdirection(NAME, '/x', ['Host', NAME, 'host', 'other.test']) ?? '', /more than one Host/);
    assert.match(misdirection(NAME, 'https://other.test/x', ['Host', NAME]) ?? '', /target names a host other/);
    assert.match(misdirection(NAME, 'https://api.test@other.test/x', ['Host', NAME]) ?? '', /target names a host other/);
    await withInterceptor(async ({ front, rewriter }) => {
      const raw = (text: string) =>
        new Promise<string>((resolve, reject) => {
          const socket = tls.connect({ host: '127.0.0.1', port: front.port, servername: NAME, ca: [ca.certPem] }, () => socket.write(text));
          const chunks: Buffer[] = [];
          socket.on('data', (chunk: Buffer) => chunks.push(chunk));
          socket.on('end', () => resolve(Buffer.concat(chunks).toString()));
          socket.on('error', reject);
        });
      const byHost = await raw(`GET /x HTTP/1.1\r\nHost: other.test\r\nAuthorization: Bearer ${PLACEHOLDER}\r\nConnection: close\r\n\r\n`);
      assert.match(byHost, /^HTTP\/1\.1 421 /);
      const byTarget = await raw(`GET https://other.test/x HTTP/1.1\r\nHost: ${NAME}\r\nConnection: close\r\n\r\n`);
      assert.match(byTarget, /^HTTP\/1\.1 421 /);
      assert.deepEqual(
        rewriter.seen.map((r) => r.misdirected !== undefined),
        [true, true],
        'rewrite is told, to record it',
      );
      assert.deepEqual(rewriter.outcomes, [{ status: 421 }, { status: 421 }]);
      // An absolute-form target for the name itself goes upstream in origin form.
      const ok = await raw(`GET https://api.test/abs?q=1 HTTP/1.1\r\nHost: ${NAME}\r\nConnection: close\r\n\r\n`);
      assert.equal((JSON.parse(ok.slice(ok.indexOf('\r\n\r\n') + 4).replace(/^[0-9a-f]+\r\n|\r\n0\r\n\r\n$/g, '')) as Echo).url, '/abs?q=1');
    });
  });

  test('answers are scrubbed of the secret: status text, headers and body, gzip, deflate and br decoded; an unknown coding is refused', async () => {
    const scrubbing: TlsInterceptorOptions['rewrite'] = (request) => ({
      path: request.path,
      rawHeaders: request.rawHeaders.map((value, i) => (i % 2 === 1 ? value.replaceAll(PLACEHOLDER, SECRET) : value)),
      scrubber: new ResponseScrubber([SECRET]),
    });
    await withInterceptor(
      async ({ front }) => {
        for (const coding of ['identity', 'gzip', 'deflate', 'br']) {
          const response = await request(front.port, ca, {
            path: `/reflect/${coding}`,
            headers: { authorization: `Bearer ${PLACEHOLDER}`, 'accept-encoding': 'gzip, br' },
          });
          assert.equal(response.status, 200, coding);
          const everything = JSON.stringify(response.headers) + response.body.toString();
          assert.ok(!everything.includes(SECRET) && !everything.includes(Buffer.from(`Bearer ${SECRET}`).toString('base64')), `${coding}: ${everything}`);
          const body = JSON.parse(response.body.toString()) as { auth: string; accept: string };
          assert.equal(body.auth, `Bearer ${'*'.repeat(SECRET.length)}`, 'masked with the same length');
          assert.equal(body.accept, 'identity', 'the upstream is asked for an uncompressed answer');
          assert.equal(response.headers['content-encoding'], undefined, coding);
          if (coding === 'identity') assert.equal(Number(response.headers['content-length']), response.body.length, 'the length is kept');
        }
        const zstd = await request(front.port, ca, { path: '/reflect/zstd', headers: { authorization: `Bearer ${PLACEHOLDER}` } });
        assert.equal(zstd.status, 502);
        assert.match(zstd.body.toString(), /Content-Encoding sandboxd cannot decode/);
        assert.ok(!zstd.body.includes(SECRET));

        // A WebSocket: compression is not offered, and server messages are masked.
        const before = upgradeHeaders.length;
        const options: ClientOptions & Pick<tls.ConnectionOptions, 'servername'> = {
          servername: NAME,
          ca: [ca.certPem],
          headers: { host: NAME, authorization: `Bearer ${PLACEHOLDER}` },
          perMessageDeflate: true,
        };
        const ws = new WebSocket(`wss://127.0.0.1:${front.port}/socket`, options);
        try {
          await new Promise<void>((resolve, reject) => {
            ws.once('open', () => resolve());
            ws.once('error', reject);
          });
          const reply = new Promise<string>((resolve) => ws.once('message', (data) => resolve(String(data))));
          ws.send('hi');
          assert.equal(await reply, `echo: hi Bearer ${'*'.repeat(SECRET.length)}`);
          assert.equal(upgradeHeaders[before]!['sec-websocket-extensions'], undefined);
        } finally {
          ws.close();
        }
      },
      { rewrite: scrubbing },
    );
  });

  test('a guest that never finishes the handshake is dropped', async () => {
    await withInterceptor(
      async ({ front }) => {
        // A real ClientHello, then silence: the interceptor answers and waits for the guest's Finished.
        const hello = await new Promise<Buffer>((resolve) => {
          const capture = net.createServer((socket) => socket.once('data', (data: Buffer) => (resolve(data), socket.destroy())));
          capture.listen(0, '127.0.0.1', () => {
            const client = tls.connect({ host: '127.0.0.1', port: (capture.address() as net.AddressInfo).port, servername: NAME, rejectUnauthorized: false });
            client.on('error', () => capture.close());
          });
        });
        const stalled = net.connect({ host: '127.0.0.1', port: front.port }, () => stalled.write(hello));
        stalled.on('error', () => undefined);
        await waitFor(() => front.connections.length === 1);
        const connection = await front.connections[0]!;
        assert.match(connection.error?.message ?? '', /did not complete the TLS handshake within 200 ms/);
        assert.equal(connection.requests, 0);
        stalled.destroy();
      },
      { handshakeTimeoutMs: 200 },
    );
  });

  test('a name no certificate can be made for, or bytes that are not TLS, close the connection with the reason', async () => {
    await withInterceptor(async ({ interceptor }) => {
      const [server, client] = await socketPair();
      server.pause();
      const result = await interceptor.handle(server, Buffer.from([22, 3, 1]), 'Bad_Name.Test', '127.0.0.1', upstreamPort);
      assert.match(result.error?.message ?? '', /not a host name/);
      assert.equal(server.destroyed, true);
      client.destroy();

      const [garbled, garbler] = await socketPair();
      garbled.pause();
      garbler.on('error', () => undefined);
      const head = Buffer.concat([Buffer.from([22, 3, 1, 0, 40]), Buffer.alloc(40, 0xee)]);
      const failed = await interceptor.handle(garbled, head, NAME, '127.0.0.1', upstreamPort);
      assert.ok(failed.error, 'a TLS error is reported');
      assert.equal(failed.requests, 0);
      garbler.destroy();
    });
  });
});

/** Two connected TCP sockets on 127.0.0.1. */
async function socketPair(): Promise<[net.Socket, net.Socket]> {
  const listener = net.createServer();
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const accepted = new Promise<net.Socket>((resolve) => listener.once('connection', resolve));
  const client = net.connect((listener.address() as net.AddressInfo).port, '127.0.0.1');
  const server = await accepted;
  listener.close();
  return [server, client];
}

describe('LeafCertificates', () => {
  let ca: CaMaterial;
  before(async () => {
    ca = await createCertificateAuthority('sandboxd test vault CA');
  });

  test('a name gets the same context twice, and concurrent first calls make one certificate', async () => {
    const leafs = new LeafCertificates(ca);
    const first = await Promise.all([1, 2, 3, 4, 5].map(() => leafs.secureContextFor('api.test')));
    assert.ok(first.every((context) => context === first[0]));
    assert.equal(await leafs.secureContextFor('api.test'), first[0]);
    assert.notEqual(await leafs.secureContextFor('other.test'), first[0]);
  });

  test('the least recently used name is dropped beyond maxEntries', async () => {
    const leafs = new LeafCertificates(ca, { maxEntries: 2 });
    const a = await leafs.secureContextFor('a.test');
    const b = await leafs.secureContextFor('b.test');
    assert.equal(await leafs.secureContextFor('a.test'), a); // a is now the most recent
    await leafs.secureContextFor('c.test'); // drops b
    assert.equal(await leafs.secureContextFor('a.test'), a);
    assert.notEqual(await leafs.secureContextFor('b.test'), b);
  });

  test('only lower-case DNS names and IPv4 literals are accepted; an IPv4 leaf carries an IP SAN', async () => {
    const leafs = new LeafCertificates(ca);
    for (const bad of ['Api.test', '*.api.test', 'api..test', 'api.test.', '', '::1', 'a b.test', `${'a'.repeat(64)}.test`, `${'a.'.repeat(127)}ab`]) {
      await assert.rejects(leafs.secureContextFor(bad), /not a host name/, bad);
    }
    await leafs.secureContextFor('under_score-1.api.test');
    const context = await leafs.secureContextFor('10.0.0.7');
    // A connection to an address carries no SNI, so the context is served directly rather than via SNICallback.
    const server = net.createServer((socket) => {
      const secure = new tls.TLSSocket(socket, { isServer: true, secureContext: context });
      secure.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const peer = await new Promise<crypto.X509Certificate>((resolve, reject) => {
        const socket = tls.connect(
          {
            host: '127.0.0.1',
            port: (server.address() as net.AddressInfo).port,
            ca: [ca.certPem],
            checkServerIdentity: (_host, cert) => tls.checkServerIdentity('10.0.0.7', cert),
          },
          () => {
            resolve(socket.getPeerX509Certificate()!);
            socket.destroy();
          },
        );
        socket.on('error', reject);
      });
      assert.equal(peer.subjectAltName, 'IP Address:10.0.0.7');
      // The chain served is leaf then CA.
      assert.ok(peer.checkIssued(new crypto.X509Certificate(ca.certPem)));
    } finally {
      server.close();
    }
  });
});
