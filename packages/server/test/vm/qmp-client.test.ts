/** The QMP client against a real QEMU (`-machine none`: no guest, starts at once). */
import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { QmpClient, QmpCommandError } from '../../src/vm/qemu/qmp-client.ts';

describe('QMP client', () => {
  let dir: string;
  let qemu: ChildProcess;
  let qmp: QmpClient;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sandboxd-qmp-'));
    const socketPath = join(dir, 'qmp.sock');
    qemu = spawn('qemu-system-x86_64', ['-machine', 'none', '-nodefaults', '-nographic', '-qmp', `unix:${socketPath},server=on,wait=off`], { stdio: 'ignore' });
    // Connect retries until QEMU has created its socket.
    qmp = await QmpClient.connect(socketPath, { timeoutMs: 10_000 });
  });

  after(async () => {
    qmp?.close();
    qemu?.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  test('reads the greeting and negotiates capabilities', async () => {
    assert.ok(qmp.version.major >= 7);
    const version = await qmp.execute<{ qemu: { major: number } }>('query-version');
    assert.equal(version.qemu.major, qmp.version.major);
  });

  test('matches concurrent commands to their answers', async () => {
    const [status, version, name] = await Promise.all([
      qmp.execute<{ status: string }>('query-status'),
      qmp.execute<{ package: string }>('query-version'),
      qmp.execute('query-name'),
    ]);
    assert.ok(typeof status.status === 'string');
    assert.ok(typeof version.package === 'string');
    assert.deepEqual(name, {});
  });

  test('rejects with the QMP error class and description', async () => {
    await assert.rejects(qmp.execute('no-such-command'), (error: unknown) => error instanceof QmpCommandError && error.errorClass === 'CommandNotFound');
  });

  test('delivers asynchronous events', async () => {
    const stopped = qmp.waitForEvent('STOP', { timeoutMs: 5000 });
    await qmp.execute('stop');
    assert.equal((await stopped).event, 'STOP');
    const resumed = qmp.waitForEvent('RESUME', { timeoutMs: 5000 });
    await qmp.execute('cont');
    assert.equal((await resumed).event, 'RESUME');
  });

  test('a wait for an event that never comes times out', async () => {
    await assert.rejects(qmp.waitForEvent('BALLOON_CHANGE', { timeoutMs: 50 }), /within 50 ms/);
  });

  test('connecting to a socket nobody serves fails after the timeout', async () => {
    await assert.rejects(QmpClient.connect(join(dir, 'missing.sock'), { timeoutMs: 200 }), /ENOENT/);
  });

  test('QEMU quitting reports SHUTDOWN, then close; later commands reject', async () => {
    const shutdown = qmp.waitForEvent('SHUTDOWN', { timeoutMs: 5000 });
    const closed = new Promise<void>((resolve) => qmp.once('close', () => resolve()));
    await qmp.execute('quit');
    assert.equal((await shutdown).data.reason, 'host-qmp-quit');
    await closed;
    assert.equal(qmp.connected, false);
    await assert.rejects(qmp.execute('query-status'), /closed/);
  });
});
