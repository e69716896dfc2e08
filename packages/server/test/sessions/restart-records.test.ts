/**
 * What a crash and a stop leave in the store, with a real server process on one data directory. A server
 * SIGKILLed while an async execution runs: right after the restart the execution is `failed` with an error
 * that says why (it used to stay `running` for the restarted server's whole life). A graceful stop with
 * SANDBOXD_KEEP_VMS_ON_SHUTDOWN ends the executions it ran but keeps the VM for the next start; a graceful
 * stop without it leaves no `active` VM (each killed with end_reason `server_shutdown` and its event), no
 * `running` execution and no QEMU process.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { openDatabase } from '../../src/store/database.ts';
import { listEventsAfter } from '../../src/store/events-store.ts';
import { qemuProcessesMatching } from '../engine/engine-fixture.ts';
import { adminApi, startServerProcess, type RunningServer } from '../helpers/processes.ts';
import { waitUntil } from '../helpers/wait.ts';

const SLEEPER = 'import time\ntime.sleep(600)';

test('a crash fails the executions it cut off at the next start; a stop records what it ended', { timeout: 600_000 }, async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-restart-'));
  const runRoot = path.join('/var/lib/sandboxd/run', createHash('sha256').update(dataDir).digest('hex').slice(0, 12));
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
    const startSleeper = async (sessionId: string) => {
      const started = await api('POST', '/v1/execute_async', { session_id: sessionId, code: SLEEPER });
      assert.equal(started.status, 200, JSON.stringify(started.body));
      const id = started.body.execution_id as number;
      return waitUntil(
        `execution ${id} to run`,
        async () => {
          const record = (await api('GET', `/v1/executions/${id}`)).body;
          return record.status === 'running' ? record : null;
        },
        120_000,
        200,
      );
    };

    const session = await api('POST', '/v1/sessions/session', { vcpu_count: 1, vm_lifetime_seconds: 900 });
    assert.equal(session.status, 200, JSON.stringify(session.body));
    const sessionId = session.body.session_id as string;
    const cutOff = await startSleeper(sessionId);
    const vmId = cutOff.vm_id as string;

    server.process.kill('SIGKILL');
    await new Promise((resolve) => server!.process.once('exit', resolve));
    server = await startServerProcess(env(true));
    const afterCrash = (await api('GET', `/v1/executions/${cutOff.id}`)).body;
    assert.equal(afterCrash.status, 'failed', `right after the restart: ${JSON.stringify(afterCrash)}`);
    assert.equal(afterCrash.is_complete, true);
    assert.match(afterCrash.error, /server stopped .* before the execution finished/);

    // The VM survived the crash and was re-adopted: the session goes on in it.
    const running = await startSleeper(sessionId);
    assert.equal(running.vm_id, vmId, 'the re-adopted VM');
    assert.equal(await server.stop(), 0);
    await inStore(dataDir, async (db) => {
      const execution = await db.selectFrom('executions').selectAll().where('id', '=', running.id).executeTakeFirstOrThrow();
      assert.equal(execution.status, 'failed');
      assert.match(execution.error ?? '', /server was shut down before the execution finished/);
      const vm = await db.selectFrom('vms').selectAll().where('id', '=', vmId).executeTakeFirstOrThrow();
      assert.equal(vm.status, 'active', 'SANDBOXD_KEEP_VMS_ON_SHUTDOWN keeps the VM for the next start');
    });

    server = await startServerProcess(env(false));
    const again = await startSleeper(sessionId);
    assert.equal(again.vm_id, vmId, 're-adopted once more');
    assert.equal(await server.stop(), 0);
    server = undefined;
    await inStore(dataDir, async (db) => {
      const live = await db.selectFrom('vms').select(['id', 'status']).where('status', 'in', ['starting', 'active']).execute();
      assert.deepEqual(live, [], 'no VM left active');
      const inFlight = await db.selectFrom('executions').select(['id', 'status']).where('status', 'in', ['queued', 'running']).execute();
      assert.deepEqual(inFlight, [], 'no execution left running');
      const vm = await db.selectFrom('vms').selectAll().where('id', '=', vmId).executeTakeFirstOrThrow();
      assert.deepEqual([vm.status, vm.end_reason], ['killed', 'server_shutdown']);
      const events = await listEventsAfter(db, 0, 1000);
      const killed = events.filter((e) => e.type === 'vm.killed' && e.data.vm_id === vmId);
      assert.deepEqual(
        killed.map((e) => [e.data.reason, e.data.detail]),
        [['server_stop', 'server_shutdown']],
      );
      const failed = events.filter((e) => e.type === 'execution.failed').map((e) => e.data.execution_id);
      assert.deepEqual(failed, [cutOff.id, running.id, again.id], 'each ended execution has its event');
    });
    assert.deepEqual(qemuProcessesMatching(`${runRoot}/`), [], 'no QEMU left');
  } catch (error) {
    // The server's own account is what tells why (CI shows only the assertion otherwise).
    if (server) console.error(`--- server output ---\n${server.output()}`);
    throw error;
  } finally {
    if (server) {
      server.process.kill('SIGKILL');
      await new Promise((resolve) => server!.process.once('exit', resolve));
      // Whatever the failed run left: a graceful start and stop without kept VMs reaps it.
      const reaper = await startServerProcess(env(false)).catch(() => undefined);
      await reaper?.stop();
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

async function inStore(dataDir: string, check: (db: Awaited<ReturnType<typeof openDatabase>>['db']) => Promise<void>): Promise<void> {
  const database = await openDatabase({ dataDir, databaseUrl: null });
  try {
    await check(database.db);
  } finally {
    await database.close();
  }
}
