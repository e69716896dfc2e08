/**
 * Disk limits through HTTP against a real server with real VMs: a session's VM gets its plan's disk quota, and
 * a server whose disk has less free space than its floor refuses new VMs with 507 HOST_STORAGE_LOW, leaving no
 * VM, QEMU process or run directory behind.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_PLANS } from '../../src/core/plans.ts';
import { qemuProcessesMatching } from '../engine/engine-fixture.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { waitUntil } from '../helpers/wait.ts';

async function newSession(server: TestServer, apiKey: string): Promise<string> {
  const created = await call(server, 'POST', '/v1/sessions/session', { apiKey, json: { vm_lifetime_seconds: 600, vcpu_count: 1, memory_mb: 512 } });
  assert.equal(created.status, 200, created.text);
  return created.body.session_id as string;
}

describe("a session's VM gets its plan's disk", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  test("the guest's root filesystem grows to the plan's diskMb", async () => {
    const { apiKey } = await server.createUserWithKey('disk-user', 'free');
    const sessionId = await newSession(server, apiKey);
    const quotaMb = DEFAULT_PLANS.free!.diskMb;
    // The disk grows in the background, a few seconds after the VM is handed out.
    const sizeMb = await waitUntil(
      `a ${quotaMb} MiB root filesystem`,
      async () => {
        const res = await call(server, 'POST', '/execute', {
          apiKey,
          json: { session_id: sessionId, language: 'bash', command: 'df -BM --output=size / | tail -1' },
        });
        assert.equal(res.status, 200, res.text);
        const size = Number(String(res.body.stdout).replace(/\D/g, ''));
        return size > quotaMb * 0.9 && size;
      },
      120_000,
      1000,
    );
    assert.ok(sizeMb <= quotaMb, `${sizeMb} MiB`);
  });
});

describe('a server below its free-space floor starts no VM', () => {
  let server: TestServer;
  before(async () => {
    // A floor above any disk's free space.
    server = await startTestServer({ config: { minFreeDiskMb: 64 * 1024 * 1024 } });
  });
  after(() => server.close());

  test('execute answers 507 HOST_STORAGE_LOW and nothing is left half-made', async () => {
    const { apiKey } = await server.createUserWithKey('floor-user');
    const sessionId = await newSession(server, apiKey);
    const res = await call(server, 'POST', '/execute', { apiKey, json: { session_id: sessionId, code: 'print(1)' } });
    assert.equal(res.status, 507, res.text);
    assert.equal(res.body.code, 'HOST_STORAGE_LOW');
    assert.match(res.body.detail, /low on disk space/);

    const status = (await call(server, 'GET', `/v1/sessions/status/${sessionId}`, { apiKey })).body;
    assert.equal(status.vm_alive, false);
    assert.notEqual(status.vm_status, 'starting');
    // Neither this VM nor a warm-pool refill made a run directory or started QEMU.
    const runDirs = fs.existsSync(server.config.vm.runDir) ? fs.readdirSync(server.config.vm.runDir) : [];
    assert.deepEqual(runDirs, []);
    assert.deepEqual(qemuProcessesMatching(server.config.vm.runDir), []);
  });
});
