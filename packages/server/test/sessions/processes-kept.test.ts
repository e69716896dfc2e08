/**
 * Background processes outlive their exec stream (kept execs, agent protocol 1.8), on one real VM and a real server
 * process: a counter started through the native API keeps running through a pause and a resume of its VM (listed
 * `running` while paused; after the resume its output goes on with no line lost or repeated, stdin reaches it), and
 * through a restart of the server on the same data directory (the new server adopts it from the VM's agent: listed,
 * its output readable and still growing); kill still ends it.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { adminApi, startServerProcess, type RunningServer } from '../helpers/processes.ts';
import { waitUntil } from '../helpers/wait.ts';

// The reader in the background: `<&0` keeps it on the process's stdin (a non-interactive shell gives an asynchronous
// list /dev/null otherwise).
const COUNTER = '(while read line; do echo "in:$line"; done) <&0 & for i in $(seq 1 1000); do echo $i; sleep 1; done';

test('a background process survives a pause and resume of its VM and a restart of the server', { timeout: 900_000 }, async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-kept-'));
  const env = (keepVms: boolean) => ({
    SANDBOXD_DATA_DIR: dataDir,
    SANDBOXD_POOL_SIZE: '0',
    SANDBOXD_WARM_VCPUS: '1',
    SANDBOXD_KEEP_VMS_ON_SHUTDOWN: String(keepVms),
    SANDBOXD_LOG_LEVEL: 'info',
  });
  let server: RunningServer | undefined;
  try {
    server = await startServerProcess(env(true));
    const api = adminApi(dataDir, () => server!.baseUrl);
    const session = await api('POST', '/v1/sessions/session', { vcpu_count: 1, vm_lifetime_seconds: 900 });
    assert.equal(session.status, 200, JSON.stringify(session.body));
    const sessionId = session.body.session_id as string;
    const base = `/v1/sessions/${sessionId}/processes`;

    const started = await api('POST', base, { command: COUNTER, stdin: true, tag: 'counter' });
    assert.equal(started.status, 201, JSON.stringify(started.body));
    const { process_id: processId, vm_id: vmId, pid } = started.body;
    assert.equal(typeof pid, 'number');

    /** All stdout the server has of the process, and the process as it answers. */
    const readAll = async () => {
      const page = await api('GET', `${base}/${processId}/output?after=0`);
      assert.equal(page.status, 200, JSON.stringify(page.body));
      const stdout = (page.body.events as { type: string; data?: string }[])
        .filter((event) => event.type === 'stdout')
        .map((event) => event.data)
        .join('');
      return { stdout, process: page.body.process };
    };
    const counted = (stdout: string) =>
      stdout
        .split('\n')
        .filter((line) => /^\d+$/.test(line))
        .map(Number);
    /** Waits until the counter printed past `n`; answers what was read. */
    const countPast = (what: string, n: number) =>
      waitUntil(
        what,
        async () => {
          const read = await readAll();
          return (counted(read.stdout).at(-1) ?? 0) > n ? read : null;
        },
        120_000,
        500,
      );

    await countPast('the counter to run', 1);
    assert.equal((await api('POST', `${base}/${processId}/stdin`, { data: 'before-pause\n' })).status, 200);
    await waitUntil('stdin before the pause', async () => ((await readAll()).stdout.includes('in:before-pause\n') ? true : null), 60_000, 500);
    const beforePause = await readAll();
    const paused = await api('POST', `/v1/vms/${vmId}/pause`);
    assert.equal(paused.status, 200, JSON.stringify(paused.body));
    const whilePaused = await api('GET', `${base}/${processId}`);
    assert.equal(whilePaused.status, 200);
    assert.equal(whilePaused.body.status, 'running', `a paused VM's process is not failed: ${JSON.stringify(whilePaused.body)}`);
    const signalWhilePaused = await api('POST', `${base}/${processId}/signal`, { signal: 'SIGCONT' });
    assert.equal(signalWhilePaused.status, 409, 'a paused VM cannot be reached');

    const resumed = await api('POST', `/v1/vms/${vmId}/resume`);
    assert.equal(resumed.status, 200, JSON.stringify(resumed.body));
    const lastBefore = counted(beforePause.stdout).at(-1)!;
    const afterResume = await countPast('output after the resume', lastBefore + 3);
    assert.equal(afterResume.process.status, 'running');
    assert.equal(afterResume.process.pid, pid, 'the same process');
    const numbers = counted(afterResume.stdout);
    assert.deepEqual(
      numbers,
      Array.from({ length: numbers.length }, (_, index) => index + 1),
      'no line lost or repeated',
    );
    t.diagnostic(`counted to ${lastBefore} before the pause, ${numbers.at(-1)} after the resume`);

    const stdin = await api('POST', `${base}/${processId}/stdin`, { data: 'after-resume\n' });
    assert.equal(stdin.status, 200, JSON.stringify(stdin.body));
    await waitUntil('stdin after the resume', async () => ((await readAll()).stdout.includes('in:after-resume\n') ? true : null), 60_000, 500);

    // A restart of the server (the VM kept): the new server finds the process in the VM's agent.
    assert.equal(await server.stop(), 0);
    server = await startServerProcess(env(true));
    const listed = await api('GET', base);
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    const adopted = (listed.body.processes as Record<string, unknown>[]).find((p) => p.process_id === processId);
    assert.ok(adopted, `listed after the restart: ${JSON.stringify(listed.body)}`);
    assert.deepEqual([adopted.status, adopted.pid, adopted.tag, adopted.command, adopted.stdin], ['running', pid, 'counter', COUNTER, true]);
    const beforeRestart = numbers.at(-1)!;
    const afterRestart = await countPast('output after the restart', beforeRestart + 3);
    assert.ok(afterRestart.stdout.includes('in:after-resume\n'), 'the output from before the restart, replayed by the agent');
    const again = counted(afterRestart.stdout);
    assert.deepEqual(
      again,
      Array.from({ length: again.length }, (_, index) => index + 1),
      'the replay from the first byte, in order',
    );

    const stdinAgain = await api('POST', `${base}/${processId}/stdin`, { data: 'after-restart\n' });
    assert.equal(stdinAgain.status, 200, JSON.stringify(stdinAgain.body));
    await waitUntil('stdin after the restart', async () => ((await readAll()).stdout.includes('in:after-restart\n') ? true : null), 60_000, 500);
    const killed = await api('DELETE', `${base}/${processId}`);
    assert.equal(killed.status, 200, JSON.stringify(killed.body));
    assert.deepEqual([killed.body.status, killed.body.signal], ['exited', 'SIGKILL']);

    assert.equal(await server.stop(), 0);
    server = await startServerProcess(env(false));
    const afterKill = await api('GET', base);
    assert.deepEqual(
      (afterKill.body.processes as { process_id: string }[]).map((p) => p.process_id),
      [],
      'a killed process is collected: nothing to adopt',
    );
    assert.equal(await server.stop(), 0);
    server = undefined;
  } catch (error) {
    if (server) console.error(`--- server output ---\n${server.output()}`);
    throw error;
  } finally {
    if (server) {
      server.process.kill('SIGKILL');
      await new Promise((resolve) => server!.process.once('exit', resolve));
      const reaper = await startServerProcess(env(false)).catch(() => undefined);
      await reaper?.stop();
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
