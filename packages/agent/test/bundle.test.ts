/**
 * The bundle the image ships (`npm run bundle`): built with the package's own script into a temporary file and
 * run as the guest runs it, with the embedded Python kernel and port-reader sources, on the unix transport.
 * (The full suites in packages/server/test/agent can run against it too: see their fixture.)
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { request, syncAndConnect } from './host-link.ts';

const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));

describe('agent bundle', () => {
  let dir: string;
  let bundle: string;
  let agent: ChildProcess;
  let socket: Socket;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sandboxd-bundle-test-'));
    bundle = join(dir, 'agent.mjs');
    await promisify(execFile)('npm', ['run', 'bundle', '--', `--outfile=${bundle}`], { cwd: PACKAGE_DIR });
    const socketPath = join(dir, 'agent.sock');
    agent = spawn(process.execPath, [bundle, '--transport', `unix:${socketPath}`, '--no-system-changes', '--cgroup-root', 'off', '--no-prestart-python'], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, HOME: dir },
    });
    await new Promise<void>((resolve, reject) => {
      agent.stdout?.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('sandboxd-stage: agent')) resolve();
      });
      agent.once('exit', (code) => reject(new Error(`the bundle exited with ${code}`)));
    });
    socket = connect(socketPath);
    await new Promise((resolve) => socket.once('connect', resolve));
  });
  after(async () => {
    socket?.destroy();
    agent?.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  it('is one small file that serves the handshake and runs Python with its embedded kernel', async () => {
    assert.ok((await stat(bundle)).size < 1024 * 1024);
    const session = await syncAndConnect(socket);
    const hello = JSON.parse((await request(session, 'GET', '/v1/hello')).body) as { protocol: { major: number } };
    assert.equal(hello.protocol.major, 1);
    const run = await request(session, 'POST', '/v1/python/run', { contextId: 'bundle', code: 'sum(range(10))' });
    assert.equal(run.status, 200);
    assert.equal((JSON.parse(run.body) as { result: string }).result, '45');
    session.destroy();
  });
});
