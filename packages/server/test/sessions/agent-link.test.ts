/**
 * A session's VM is never replaced behind its back. When the host's link to a VM's agent drops while QEMU
 * lives (finding 3: a 65,536-character upload path ended the agent's HTTP/2 session; here the host's side of
 * the link is closed under a running request, which any link failure comes down to), the request that hit it
 * fails with VM_AGENT_UNAVAILABLE, the engine reconnects, and the next execute runs on the same VM with the
 * session's Python state. A VM whose agent cannot be reached again (here its QEMU is frozen with SIGSTOP) is
 * killed and recorded as `agent_lost` with a `vm.agent_lost` event; only then does the next execute start a
 * new VM.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { AppError } from '../../src/core/errors.ts';
import type { SandboxEngine } from '../../src/engine/sandbox-engine.ts';
import { listEventsAfter } from '../../src/store/events-store.ts';
import { qemuProcessesMatching, sh } from '../engine/engine-fixture.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { waitUntil } from '../helpers/wait.ts';

async function startSession(server: TestServer, apiKey: string) {
  const session = await call(server, 'POST', '/v1/sessions/session', { apiKey, json: { vcpu_count: 1 } });
  assert.equal(session.status, 200, session.text);
  return session.body.session_id as string;
}

/** The QEMU process of a VM, found through the engine's state file that names it. */
function qemuPidOf(server: TestServer, vmId: string): number {
  const stateDir = path.join(server.dataDir, 'vms');
  const state = fs
    .readdirSync(stateDir)
    .map((file) => JSON.parse(fs.readFileSync(path.join(stateDir, file), 'utf8')) as { driverId: string; vmId: string })
    .find((s) => s.vmId === vmId);
  assert.ok(state, `no engine state for ${vmId}`);
  const [pid] = qemuProcessesMatching(state.driverId);
  assert.ok(pid, `no QEMU process for ${vmId}`);
  return pid;
}

describe('a dropped agent link', () => {
  let server: TestServer;
  let apiKey: string;

  before(async () => {
    server = await startTestServer({ config: { agentReconnectSeconds: 5 } });
    ({ apiKey } = await server.createUserWithKey('linker', 'pro'));
  });
  after(() => server.close());

  const execute = (sessionId: string, code: string) => call(server, 'POST', '/execute', { apiKey, json: { session_id: sessionId, code } });

  test('the failing request answers VM_AGENT_UNAVAILABLE; the next execute runs on the same VM with its Python state', { timeout: 180_000 }, async () => {
    const sessionId = await startSession(server, apiKey);
    const first = await execute(sessionId, 'x = 42\nprint("set")');
    assert.equal(first.status, 200, first.text);
    const vmId = first.body.vm_id as string;

    const engine = server.services.sandbox.engine as SandboxEngine;
    const client = engine.client(vmId)!;
    const cutOff = engine
      .agent(vmId)!
      .exec({ command: 'sleep 30', shell: ['/bin/bash', '-c'], timeoutMs: 60_000 }, { onStdout: () => {}, onStderr: () => {} })
      .then(
        () => null,
        (error: AppError) => error,
      );
    await waitUntil('the command to run', () => sh(engine, vmId, 'pgrep -x sleep').catch(() => ''), 30_000, 100);
    await client.close();
    assert.equal((await cutOff)?.code, 'VM_AGENT_UNAVAILABLE', 'the request the link dropped under');

    const second = await execute(sessionId, 'print(x)');
    assert.equal(second.status, 200, second.text);
    assert.equal(second.body.vm_id, vmId, 'the same VM');
    assert.equal(second.body.stdout, '42\n', 'with its Python state');

    const status = (await call(server, 'GET', `/v1/sessions/status/${sessionId}`, { apiKey })).body;
    assert.equal(status.vm_id, vmId);
    assert.equal(status.vm_alive, true);
    const active = (await call(server, 'GET', '/v1/vms?status=active', { apiKey })).body as { vm_id: string }[];
    assert.deepEqual(
      active.map((vm) => vm.vm_id),
      [vmId],
      'no second VM was started for the session',
    );
    await call(server, 'POST', '/kill', { apiKey, json: { session_id: sessionId } });
  });

  test('a VM whose agent cannot be reached again is killed as agent_lost, with its event; the next execute gets a new VM', { timeout: 180_000 }, async () => {
    const sessionId = await startSession(server, apiKey);
    const first = await execute(sessionId, 'y = 1');
    assert.equal(first.status, 200, first.text);
    const vmId = first.body.vm_id as string;
    const pid = qemuPidOf(server, vmId);
    const seqBefore = await server.services.eventFeed.latestSeq();

    // A frozen guest: the hypervisor process lives, but nothing in it answers.
    process.kill(pid, 'SIGSTOP');
    try {
      const engine = server.services.sandbox.engine as SandboxEngine;
      await engine.client(vmId)!.close();

      const status = await waitUntil(
        'the VM to be recorded ended',
        async () => {
          const view = (await call(server, 'GET', `/v1/sessions/status/${sessionId}`, { apiKey })).body;
          return view.vm_status === 'killed' ? view : null;
        },
        60_000,
        250,
      );
      assert.deepEqual([status.vm_id, status.vm_alive, status.expires_in_seconds], [vmId, false, 0]);
    } finally {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // Already gone: the engine killed it.
      }
    }
    const vm = (await call(server, 'GET', `/v1/vms/${vmId}`, { apiKey })).body;
    assert.deepEqual([vm.status, vm.end_reason, vm.end_detail], ['killed', 'error', 'agent_lost']);
    const events = await listEventsAfter(server.services.database.db, seqBefore, 100);
    const lost = events.filter((e) => e.type === 'vm.agent_lost');
    assert.equal(lost.length, 1, `one vm.agent_lost event: ${JSON.stringify(events.map((e) => e.type))}`);
    assert.deepEqual([lost[0]!.data.vm_id, lost[0]!.data.session_id, lost[0]!.data.reason, lost[0]!.data.detail], [vmId, sessionId, 'error', 'agent_lost']);
    await waitUntil('its QEMU to be gone', async () => !isAlive(pid), 10_000);

    const next = await execute(sessionId, 'print("y" in globals())');
    assert.equal(next.status, 200, next.text);
    assert.notEqual(next.body.vm_id, vmId, 'a new VM, now that the old one is recorded ended');
    assert.equal(next.body.stdout, 'False\n');
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
