/** TCP tunnels through the real agent to servers listening inside the "guest" (here: the host's loopback). */
import assert from 'node:assert/strict';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { GuestPortUnreachableError, type AgentClient } from '../../src/agent/index.ts';
import { startAgent, type AgentFixture } from './agent-fixture.ts';

describe('agent tunnels', () => {
  let agent: AgentFixture;
  let client: AgentClient;
  let echo: Server;
  let port: number;
  before(async () => {
    agent = await startAgent(['--no-prestart-python']);
    client = await agent.connect();
    echo = createServer({ allowHalfOpen: true }, (socket) => {
      socket.pipe(socket);
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    port = (echo.address() as AddressInfo).port;
  });
  after(async () => {
    echo.close();
    await agent.stop();
  });

  // Regression: 3 MiB echoed back deadlocked when both HTTP/2 ends stopped reading while their writes waited.
  it('carries bytes both ways and passes half-closes through', { timeout: 20_000 }, async () => {
    const tunnel = await client.openTunnel(port);
    const payload = Buffer.concat([Buffer.from('hello through the tunnel\n'), Buffer.alloc(3 * 1024 * 1024, 7)]);
    const received: Buffer[] = [];
    tunnel.on('data', (chunk: Buffer) => received.push(chunk));
    const ended = new Promise((resolve) => tunnel.once('end', resolve));
    tunnel.end(payload);
    await ended; // the echo server ends only after our end reached it
    assert.deepEqual(Buffer.concat(received), payload);
  });

  it('serves several tunnels at once', async () => {
    const answers = await Promise.all(
      Array.from({ length: 10 }, async (_, index) => {
        const tunnel = await client.openTunnel(port);
        const chunks: Buffer[] = [];
        tunnel.on('data', (chunk: Buffer) => chunks.push(chunk));
        await new Promise((resolve) => {
          tunnel.once('end', resolve);
          tunnel.end(`tunnel ${index}`);
        });
        return Buffer.concat(chunks).toString();
      }),
    );
    assert.deepEqual(
      answers,
      Array.from({ length: 10 }, (_, index) => `tunnel ${index}`),
    );
  });

  // Regression: Node 20's HTTP/2 streams garbled the first 16 bytes of a string in a vectored write, which is
  // how Node's HTTP client sends a request's head together with its body: every proxied POST with a body
  // reached the app as "<garbage>1.1\r\nHost: …" (the preview proxy answered 502).
  it("carries Node's HTTP/1.1 requests with bodies intact (the preview proxy's forwarding)", async () => {
    const seen: string[] = [];
    const app = createHttpServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        seen.push(`${request.method} ${request.url} ${body}`);
        response.end(`got ${body.length} bytes`);
      });
    });
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    try {
      const appPort = (app.address() as AddressInfo).port;
      const post = async (send: (request: ReturnType<typeof httpRequest>) => void, headers: Record<string, string>) => {
        const tunnel = await client.openTunnel(appPort);
        return new Promise<string>((resolve, reject) => {
          const request = httpRequest(
            { method: 'POST', path: '/form?x=1', headers: { host: 'app.test', ...headers }, createConnection: () => tunnel as Socket },
            (response) => {
              let text = '';
              response.on('data', (chunk: Buffer) => (text += chunk.toString()));
              response.on('end', () => resolve(`${response.statusCode} ${text}`));
            },
          );
          request.on('error', reject);
          send(request);
        });
      };
      assert.equal(await post((request) => request.end('name=value'), { 'content-length': '10' }), '200 got 10 bytes');
      assert.equal(await post((request) => request.end(Buffer.from('{"a":1}')), {}), '200 got 7 bytes');
      assert.equal(
        await post((request) => {
          request.write('chunk-1;');
          setTimeout(() => request.end('chunk-2'), 20);
        }, {}),
        '200 got 15 bytes',
      );
      assert.deepEqual(seen, ['POST /form?x=1 name=value', 'POST /form?x=1 {"a":1}', 'POST /form?x=1 chunk-1;chunk-2']);
    } finally {
      app.close();
    }
  });

  it('says when nothing listens on the port', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const unusedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await assert.rejects(client.openTunnel(unusedPort), (error: unknown) => {
      assert.ok(error instanceof GuestPortUnreachableError);
      assert.equal(error.port, unusedPort);
      assert.match(error.message, /nothing accepts connections/);
      return true;
    });
  });
});
