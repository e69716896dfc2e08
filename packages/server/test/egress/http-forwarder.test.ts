/**
 * The egress proxy's plain-HTTP step against real sockets: a guest connection (a raw TCP client) through
 * `HttpForwarder` to an upstream HTTP server that answers for any Host. Every request is decided on its own
 * (keep-alive, pipelining), WebSocket upgrades to an allowed name work and to another are refused, CONNECT is
 * refused, bodies stream and the vault's `inspect` sees the request bytes, and what is not HTTP/1.1 is refused.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { after, before, describe, test } from 'node:test';
import type { ProxiedConnection } from '../../src/net/egress/proxied-connection.ts';
import { HttpForwarder } from '../../src/net/egress/http-forwarder.ts';

describe('HTTP requests through the egress proxy', () => {
  let upstream: http.Server;
  let listener: net.Server;
  let forwarder: HttpForwarder;
  let port: number;
  const records: ProxiedConnection[] = [];
  const inspected: Buffer[] = [];

  before(async () => {
    upstream = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => res.end(`host=${req.headers.host} ${req.method} ${req.url} body=${body}`));
    });
    upstream.on('upgrade', (req: http.IncomingMessage, socket: net.Socket) => {
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nX-Host: ${req.headers.host}\r\n\r\n`);
      socket.on('data', (chunk) => socket.write(Buffer.concat([Buffer.from('echo:'), chunk])));
    });
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    forwarder = new HttpForwarder({
      upstreamPort: (upstream.address() as net.AddressInfo).port,
      decide: async (request) =>
        request.name === 'allowed.test'
          ? { allowed: true, address: '127.0.0.1', inspect: (chunk) => inspected.push(Buffer.from(chunk)) }
          : { allowed: false, reason: 'name not allowed by the egress policy' },
      record: (connection) => records.push(connection),
    });
    listener = net.createServer((socket) => forwarder.handle(socket));
    listener.listen(0, '127.0.0.1');
    await once(listener, 'listening');
    port = (listener.address() as net.AddressInfo).port;
  });

  after(async () => {
    await forwarder.close();
    listener.close();
    upstream.closeAllConnections();
    upstream.close();
  });

  /** Sends `data` on a new connection and collects what comes back until the server closes or `ms` pass. */
  async function exchange(data: string | string[], ms = 700): Promise<string> {
    const socket = net.connect(port, '127.0.0.1');
    await once(socket, 'connect');
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    for (const part of Array.isArray(data) ? data : [data]) {
      socket.write(part);
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    await Promise.race([once(socket, 'close'), new Promise((resolve) => setTimeout(resolve, ms))]);
    socket.destroy();
    return received;
  }

  test('a keep-alive connection: each request is decided by its own Host', async () => {
    const out = await exchange(['GET /a HTTP/1.1\r\nHost: allowed.test\r\n\r\n', 'GET /b HTTP/1.1\r\nHost: other.test\r\n\r\n']);
    assert.match(out, /200 OK[\s\S]*host=allowed.test GET \/a/);
    assert.match(out, /403 Forbidden[\s\S]*refuses other.test/);
    assert.doesNotMatch(out, /host=other.test/);
    assert.ok(records.some((r) => r.request.name === 'other.test' && r.verdict === 'refused'));
  });

  test('a chunked body streams upstream and the vault inspects the request bytes', async () => {
    inspected.length = 0;
    const out = await exchange('POST /p HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked\r\nX-Key: sbxv_marker\r\n\r\n5\r\nhello\r\n0\r\n\r\n');
    assert.match(out, /host=allowed.test POST \/p body=hello/);
    const seen = Buffer.concat(inspected).toString('latin1');
    assert.match(seen, /X-Key: sbxv_marker/);
    assert.match(seen, /hello/);
  });

  test('a WebSocket upgrade to an allowed name is relayed; to another name it is refused', async () => {
    const handshake = (host: string) =>
      `GET /ws HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`;
    const allowed = await exchange([handshake('allowed.test'), 'frame-1']);
    assert.match(allowed, /^HTTP\/1.1 101 Switching Protocols[\s\S]*X-Host: allowed.test[\s\S]*echo:frame-1/);
    const refused = await exchange([handshake('other.test'), 'frame-1']);
    assert.match(refused, /^HTTP\/1.1 403 Forbidden/);
    assert.doesNotMatch(refused, /echo:/);
  });

  test('CONNECT and what is not HTTP/1.1 are refused, never forwarded', async () => {
    assert.match(await exchange('CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n'), /^HTTP\/1.1 405 /);
    assert.match(await exchange('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), /^HTTP\/1.1 400 /);
    assert.ok(
      records.some((r) => r.verdict === 'refused' && /not an HTTP\/1.1 request/.test(r.reason ?? '')),
      JSON.stringify(records.slice(-3)),
    );
  });
});
