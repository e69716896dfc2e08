/**
 * Security regression (issue 31, L-8): the host caps what it reads of a guest agent's answer. The guest agent is
 * not trusted (the user is root in the VM and can replace it), so here a hostile agent answers: the real agent's
 * link server (link sync, then HTTP/2) over a real unix socket, with HTTP/2 handlers that answer hello and ping
 * properly and everything else with an endless body. The host side is the real `AgentClient`. No VM: replacing
 * the agent inside a real VM would test the same bytes on the same code path for a minute more of TCG.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import http2 from 'node:http2';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PROTOCOL_VERSION, ROUTES, type HelloResponse } from '@sandboxd/agent/protocol';
import { LinkServer } from '../../../agent/src/link/link-server.ts';
import { SocketLink } from '../../../agent/src/link/socket-link.ts';
import { AgentAnswerTooLargeError, AgentClient, ANSWER_MAX_BYTES } from '../../src/agent/index.ts';
import { AppError } from '../../src/core/errors.ts';
import { translateAgentError } from '../../src/engine/guest-agent.ts';

const CHUNK = Buffer.alloc(64 * 1024, 0x20);

/** A hostile agent on a unix socket; `sentBytes` counts what each endless answer managed to hand to HTTP/2. */
async function startHostileAgent(dir: string) {
  const socketPath = join(dir, 'agent.sock');
  const sent: Record<string, number> = {};
  const ended: Record<string, Promise<void>> = {};
  const h2 = http2.createServer();
  h2.on('stream', (stream, headers) => {
    const path = String(headers[':path']).split('?')[0]!;
    if (path === ROUTES.hello) {
      const hello: HelloResponse = {
        protocol: PROTOCOL_VERSION,
        agentVersion: 'hostile',
        vmId: 'vm-hostile',
        hostname: 'hostile',
        bootId: null,
        capabilities: [],
        uptimeSeconds: 1,
      };
      stream.respond({ ':status': 200, 'content-type': 'application/json' });
      stream.end(JSON.stringify(hello));
      return;
    }
    if (path === ROUTES.ping) {
      stream.respond({ ':status': 200, 'content-type': 'application/json' });
      stream.end(JSON.stringify({ nowMs: Date.now() }));
      return;
    }
    // An endless answer (a 200, or an error status with an endless "error body"), as fast as the host takes it.
    const status = path === ROUTES.fileStat ? 404 : 200;
    stream.respond({ ':status': status, 'content-type': 'application/json' });
    sent[path] = 0;
    ended[path] = new Promise((resolve) => {
      const pump = (): void => {
        while (!stream.destroyed && !stream.closed) {
          sent[path]! += CHUNK.length;
          if (!stream.write(CHUNK)) return void stream.once('drain', pump);
        }
      };
      stream.once('close', () => resolve());
      stream.on('error', () => undefined);
      stream.write('{"cpu":"');
      pump();
    });
  });
  const links: LinkServer[] = [];
  const server = net.createServer((socket) => {
    const link = new LinkServer(new SocketLink(socket, 'hostile'), h2);
    links.push(link);
    link.start();
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return {
    socketPath,
    sent,
    ended,
    close: async () => {
      for (const link of links) link.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('security: guest agent answers (L-8)', () => {
  let dir: string;
  let agent: Awaited<ReturnType<typeof startHostileAgent>>;
  let client: AgentClient;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sandboxd-hostile-agent-'));
    agent = await startHostileAgent(dir);
    client = await AgentClient.connect({ socketPath: agent.socketPath }, { timeoutMs: 10_000 });
  });
  after(async () => {
    await client?.close();
    await agent?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('L-8: an endless agent answer fails the call without being buffered', async () => {
    const timeoutMs = 5000;
    const heapBefore = process.memoryUsage().arrayBuffers;
    const started = performance.now();
    const error = await client.usage({ timeoutMs }).then(
      () => assert.fail('an endless answer cannot be a usage report'),
      (caught: unknown) => caught,
    );
    const elapsedMs = performance.now() - started;
    assert.ok(error instanceof AgentAnswerTooLargeError, `expected the answer to be refused as too large, got ${String(error)}`);
    assert.equal(error.code, 'AGENT_ANSWER_TOO_LARGE');
    assert.match(error.message, /usage: the agent's answer is longer than 1 MiB/);
    // It failed on the cap, not on the deadline after reading for seconds.
    assert.ok(elapsedMs < timeoutMs / 2, `the call failed after ${Math.round(elapsedMs)} ms`);
    // The host cancelled the stream: the agent could hand HTTP/2 no more than the cap plus the flow-control
    // window (4 MiB per stream) and its own buffers; without the cancel it keeps sending until the deadline.
    await agent.ended[ROUTES.usage];
    const sentBytes = agent.sent[ROUTES.usage]!;
    assert.ok(sentBytes < ANSWER_MAX_BYTES.control + 8 * 1024 * 1024, `the agent sent ${sentBytes} bytes`);
    const grownBytes = process.memoryUsage().arrayBuffers - heapBefore;
    assert.ok(grownBytes < 32 * 1024 * 1024, `buffers grew by ${grownBytes} bytes`);

    // An endless error body is capped the same way.
    const statError = await client.stat('/etc/hostname', { timeoutMs }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    assert.ok(statError instanceof AgentAnswerTooLargeError, String(statError));
    // The API answers it with a code of its own, not "agent unavailable".
    const translated = translateAgentError(error);
    assert.ok(translated instanceof AppError);
    assert.equal(translated.code, 'VM_AGENT_ANSWER_TOO_LARGE');
    assert.equal(translated.statusCode, 502);
    // One refused answer costs only that call: the session is still up.
    assert.equal(client.connected, true);
    assert.ok((await client.ping()).rttMs >= 0);
  });
});
