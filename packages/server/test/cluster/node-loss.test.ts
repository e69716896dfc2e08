/**
 * A node dies: node A in this process and node B in a process of its own, on one PostgreSQL, with a short
 * heartbeat (1 s) and dead-after (3 s). A session's VM runs on B; B is killed with SIGKILL. Within the timeout A
 * declares B dead and records the VM lost (`vm.lost`); the session's next execute through A starts a new VM on
 * A. B's restart on the same data directory re-registers it and reaps what its previous process left running
 * (the VM's QEMU outlived the SIGKILL): nothing runs there that the store does not count.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { loadConfig } from '../../src/config/index.ts';
import { startPostgres, type PostgresServer } from '../helpers/postgres.ts';
import { startServerProcess, type RunningServer } from '../helpers/processes.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { waitUntil } from '../helpers/wait.ts';

/** QEMU processes whose command line names a run directory under `runDir` (one node's VMs). */
function qemuUnder(runDir: string): number {
  const lines = execFileSync('ps', ['-ww', '-eo', 'args'], { encoding: 'utf8' }).split('\n');
  return lines.filter((line) => line.startsWith('qemu-system') && line.includes(runDir)).length;
}

let postgres: PostgresServer | undefined;
let a: TestServer | undefined;
let b: RunningServer | undefined;
const bDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-node-b-'));
after(async () => {
  await b?.stop();
  await a?.close();
  await postgres?.stop();
  fs.rmSync(bDataDir, { recursive: true, force: true });
});

test('SIGKILL of node B: its VM is recorded lost within the timeout, the session moves to A, B restarts and reaps', { timeout: 240_000 }, async () => {
  postgres = await startPostgres();
  const heartbeat = { nodeHeartbeatSeconds: 1, nodeDeadAfterSeconds: 3 };
  a = await startTestServer({ config: { databaseUrl: postgres.url, nodeId: 'node-a', ...heartbeat } });
  const bEnv = {
    SANDBOXD_DATABASE_URL: postgres.url,
    SANDBOXD_NODE_ID: 'node-b',
    SANDBOXD_DATA_DIR: bDataDir,
    SANDBOXD_HOST: '127.0.0.1',
    SANDBOXD_NODE_HEARTBEAT_SECONDS: '1',
    SANDBOXD_NODE_DEAD_AFTER_SECONDS: '3',
    SANDBOXD_POOL_SIZE: '0',
    SANDBOXD_ADMIN_LISTEN: 'off',
    SANDBOXD_LOG_LEVEL: 'info',
  };
  b = await startServerProcess(bEnv, 120_000);
  const bRunDir = loadConfig({ SANDBOXD_DATA_DIR: bDataDir }).vm.runDir;
  const alice = (await a.createUserWithKey('alice', 'pro')).apiKey;
  const db = a.services.database.db;

  // A drained: the session's VM is placed on B.
  await a.services.sandbox.nodes.setDrained('node-a', true);
  const sessionId = (await call(a, 'POST', '/v1/sessions/session', { apiKey: alice, json: { vcpu_count: 1, vm_lifetime_seconds: 600 } })).body
    .session_id as string;
  const first = await call(a, 'POST', '/execute', { apiKey: alice, json: { session_id: sessionId, command: 'print("on-b")' } });
  assert.equal(first.status, 200, first.text);
  const lostVm = await db.selectFrom('vms').select(['id', 'node_id']).where('session_id', '=', sessionId).executeTakeFirstOrThrow();
  assert.equal(lostVm.node_id, 'node-b');
  assert.equal(qemuUnder(bRunDir), 1, "B runs the session's VM");
  await a.services.sandbox.nodes.setDrained('node-a', false);

  b.process.kill('SIGKILL');
  await new Promise((resolve) => b!.process.once('exit', resolve));
  const killedAt = Date.now();
  await waitUntil(
    'the VM recorded lost',
    async () => (await db.selectFrom('vms').select('end_reason').where('id', '=', lostVm.id).executeTakeFirstOrThrow()).end_reason === 'node_lost',
    15_000,
    100,
  );
  const within = Date.now() - killedAt;
  assert.ok(within < 3000 + 2 * 1000 + 2000, `recorded lost ${within} ms after the kill (dead after 3 s, heartbeats every 1 s)`);
  assert.equal((await db.selectFrom('cluster_nodes').select('state').where('id', '=', 'node-b').executeTakeFirstOrThrow()).state, 'dead');
  const lostEvents = await db.selectFrom('events').select('type').where('subject_id', '=', lostVm.id).execute();
  assert.ok(
    lostEvents.some((e) => e.type === 'vm.lost'),
    JSON.stringify(lostEvents),
  );

  const next = await call(a, 'POST', '/execute', { apiKey: alice, json: { session_id: sessionId, language: 'bash', command: 'hostname' } });
  assert.equal(next.status, 200, next.text);
  const current = await db
    .selectFrom('vms')
    .select(['id', 'node_id'])
    .where('session_id', '=', sessionId)
    .where('status', '=', 'active')
    .executeTakeFirstOrThrow();
  assert.equal(current.node_id, 'node-a', 'the next execute started a VM on a live node');
  assert.equal(next.body.stdout.trim(), current.id);
  assert.equal(qemuUnder(bRunDir), 1, "the dead node's QEMU outlived its SIGKILL");

  b = await startServerProcess(bEnv, 120_000);
  await waitUntil("B's restart reaped its leftover VM", async () => qemuUnder(bRunDir) === 0, 60_000, 200);
  await waitUntil(
    'B registered live again',
    async () => (await db.selectFrom('cluster_nodes').select('state').where('id', '=', 'node-b').executeTakeFirstOrThrow()).state === 'live',
    10_000,
    100,
  );
  const row = await db.selectFrom('vms').select(['status', 'end_reason']).where('id', '=', lostVm.id).executeTakeFirstOrThrow();
  assert.deepEqual(row, { status: 'killed', end_reason: 'node_lost' }, 'the restart did not bring the lost VM back');
});
