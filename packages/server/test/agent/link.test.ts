/**
 * The channel between host and agent: reconnects (the EOF / wait-for-host logic, emulated by closing and
 * reopening the unix connection), snapshot preparation, junk before link sync, and connection failures.
 */
import assert from 'node:assert/strict';
import { createServer as createHttp2Server } from 'node:http2';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { encodeAgentReady, findHostHello, HTTP2_PREFACE, PROTOCOL_VERSION, ROUTES } from '@sandboxd/agent/protocol';
import { AgentClient, AgentProtocolError, AgentTimeoutError, AgentUnavailableError } from '../../src/agent/index.ts';
import { startAgent, type AgentFixture } from './agent-fixture.ts';

function openSocket(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(path, () => resolve(socket));
    socket.once('error', reject);
  });
}

describe('agent link', () => {
  let agent: AgentFixture;
  before(async () => {
    agent = await startAgent(['--no-prestart-python']);
  });
  after(() => agent.stop());

  it('accepts a new host after the previous one closed its session', async () => {
    for (let round = 0; round < 3; round++) {
      const client = await agent.connect();
      assert.equal((await client.exec({ argv: ['echo', String(round)] }).collect()).stdout.toString(), `${round}\n`);
      await client.close();
    }
  });

  it('kills the work of a host that vanished and serves the next one', async () => {
    const socket = await openSocket(agent.socketPath);
    const client = await AgentClient.connect({ stream: socket });
    const closed = new Promise((resolve) => client.once('close', resolve));
    const handle = client.exec({ argv: ['sleep', '30'] });
    const pid = await handle.pid;
    socket.destroy(); // the host process died: no GOAWAY, just EOF
    await closed;
    await assert.rejects(handle.result, AgentUnavailableError);
    const next = await agent.connect();
    assert.equal((await next.ping()).rttMs >= 0, true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, 'the orphaned process still runs');
  });

  it('after snapshot preparation the agent waits for a new host at once', async () => {
    const client = await agent.connect();
    const prepared = await client.prepareSnapshot({ timeoutMs: 30_000 });
    assert.equal(prepared.helperReady, true);
    assert.equal(prepared.spareKernelReady, false, 'this agent runs without a spare interpreter');
    assert.equal(client.connected, false, 'prepareSnapshot closes the client');
    const started = performance.now();
    const next = await agent.connect();
    const reconnectMs = performance.now() - started;
    assert.equal((await next.hello()).protocol.major, PROTOCOL_VERSION.major);
    assert.ok(reconnectMs < 2000, `reconnect took ${reconnectMs} ms`);
  });

  it('discards junk a previous host left on the channel before the hello', async () => {
    const socket = await openSocket(agent.socketPath);
    socket.write(Buffer.concat([Buffer.from('leftover GOAWAY bytes and a cut-off frame'), HTTP2_PREFACE.subarray(0, 10)]));
    const client = await AgentClient.connect({ stream: socket });
    assert.equal((await client.runPython({ contextId: 'junk', code: '6*7' })).result, '42');
    await client.close();
  });

  it('reports a missing socket as unavailable', async () => {
    await assert.rejects(AgentClient.connect({ socketPath: join(agent.dir, 'nothing.sock') }), AgentUnavailableError);
  });

  it('times out when nothing answers the hello (a VM that has not booted)', async () => {
    const path = join(agent.dir, 'silent.sock');
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(path, resolve));
    const started = Date.now();
    await assert.rejects(AgentClient.connect({ socketPath: path }, { timeoutMs: 500 }), AgentTimeoutError);
    assert.ok(Date.now() - started < 2000);
    for (const socket of sockets) socket.destroy();
    silent.close();
  });
});

describe('agent handshake with another protocol major', () => {
  let fake: Server;
  let path: string;
  before(async () => {
    path = join(process.env.TMPDIR ?? '/tmp', `sandboxd-fake-agent-${process.pid}.sock`);
    const http2 = createHttp2Server();
    http2.on('stream', (stream, headers) => {
      assert.equal(headers[':path'], ROUTES.hello);
      stream.respond({ ':status': 200, 'content-type': 'application/json' });
      stream.end(JSON.stringify({ protocol: { major: PROTOCOL_VERSION.major + 1, minor: 0 }, agentVersion: '9.0.0' }));
    });
    fake = createServer((socket) => {
      let received = Buffer.alloc(0);
      const onData = (chunk: Buffer): void => {
        received = Buffer.concat([received, chunk]);
        const hello = findHostHello(received);
        if (!hello) return;
        socket.off('data', onData);
        socket.write(encodeAgentReady(hello.nonce));
        const rest = received.subarray(hello.end);
        if (rest.length > 0) socket.unshift(rest);
        http2.emit('connection', socket);
      };
      socket.on('data', onData);
    });
    await new Promise<void>((resolve) => fake.listen(path, resolve));
  });
  after(() => fake.close());

  it('refuses the agent with a message naming both versions', async () => {
    await assert.rejects(AgentClient.connect({ socketPath: path }), (error: unknown) => {
      assert.ok(error instanceof AgentProtocolError);
      assert.match(error.message, new RegExp(`protocol ${PROTOCOL_VERSION.major + 1}\\.0, this host ${PROTOCOL_VERSION.major}\\.`));
      return true;
    });
  });
});
