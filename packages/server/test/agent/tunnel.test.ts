/** TCP tunnels through the real agent to servers listening inside the "guest" (here: the host's loopback). */
import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Server } from 'node:net';
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
    assert.deepEqual(answers, Array.from({ length: 10 }, (_, index) => `tunnel ${index}`));
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
