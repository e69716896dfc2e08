/**
 * Any node, any time (issue 37): three nodes on one PostgreSQL and one S3-compatible store (s3rver), each with a
 * data directory, run directory and capture directory of its own. Node A and node B are server processes, node C
 * runs in this process. Nothing passes between the nodes but the store and the object store: A's capture
 * directory is removed once A is gone, so C cannot read A's files by path.
 *
 * - A template built through A starts a VM on B (B fetches the template, and the template's snapshot A made).
 * - A volume written by a VM on B is read by a VM on C (uploaded when B's VM ended, fetched by C).
 * - A VM paused on A (a Python variable, a file, a background process) is resumed through C after A was SIGKILLed.
 * - A snapshot taken on C starts a VM on B.
 * - Draining C hands its paused VMs to the cluster: the VM paused on C is resumed on B by a request through C.
 * - `GET /v1/admin/storage` counts what the store holds and each node's cache; garbage collection frees the chunks of
 *   the consumed pause and none a snapshot references (a VM still starts from it after the collection).
 * - With the object store stopped, a pause (on B) fails with 503 OBJECT_STORE_UNAVAILABLE and the VM runs on, its
 *   state intact.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/index.ts';
import { addDebianImage, commonBaseTar, createLayout, DEBIAN_TAG, type TestLayout } from '../image/oci-image-fixture.ts';
import { pushImage, startRegistry, type TestRegistry } from '../image/registry-fixture.ts';
import { startPostgres, type PostgresServer } from '../helpers/postgres.ts';
import { startServerProcess, type RunningServer } from '../helpers/processes.ts';
import { startS3Server, type TestS3Server } from '../helpers/s3-server.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { waitUntil } from '../helpers/wait.ts';

const BUCKET = 'sandboxd-artifacts';

describe('any node, any time: artifacts in the object store', { timeout: 30 * 60_000 }, () => {
  let postgres: PostgresServer;
  let s3: TestS3Server;
  let registry: TestRegistry;
  let layout: TestLayout;
  let c: TestServer;
  let a: RunningServer | undefined;
  let b: RunningServer | undefined;
  const aDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-node-a-'));
  const bDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-node-b-'));
  let alice: string;
  let root: string;
  let reference: string;

  /** An HTTP call to a server process (A or B) as `apiKey`. */
  const onNode = async (node: RunningServer, method: string, url: string, apiKey: string, json?: unknown) => {
    const response = await fetch(`${node.baseUrl}${url}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(json !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
    });
    const text = await response.text();
    let body: any = null;
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
    return { status: response.status, body, text };
  };
  const vmRow = (id: string) => c.services.database.db.selectFrom('vms').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  before(async () => {
    [postgres, s3, registry, layout] = await Promise.all([startPostgres(), startS3Server([BUCKET]), startRegistry(), createLayout()]);
    await addDebianImage(layout, await commonBaseTar());
    await pushImage(registry, layout.dir, DEBIAN_TAG, 'sandboxd-test/debian');
    reference = `${registry.host}/sandboxd-test/debian:${DEBIAN_TAG}`;
    const shared = {
      SANDBOXD_DATABASE_URL: postgres.url,
      SANDBOXD_HOST: '127.0.0.1',
      SANDBOXD_POOL_SIZE: '0',
      SANDBOXD_ADMIN_LISTEN: 'off',
      SANDBOXD_LOG_LEVEL: 'info',
      SANDBOXD_OBJECT_STORE: 's3',
      SANDBOXD_S3_ENDPOINT: s3.endpoint,
      SANDBOXD_S3_BUCKET: BUCKET,
      SANDBOXD_S3_ACCESS_KEY_ID: s3.accessKeyId,
      SANDBOXD_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      SANDBOXD_TEMPLATE_INSECURE_REGISTRIES: registry.host,
      // A SIGKILLed node is declared dead within seconds (placement then passes it over).
      SANDBOXD_NODE_HEARTBEAT_SECONDS: '1',
      SANDBOXD_NODE_DEAD_AFTER_SECONDS: '3',
    };
    c = await startTestServer({
      config: {
        databaseUrl: postgres.url,
        nodeId: 'node-c',
        nodeHeartbeatSeconds: 1,
        nodeDeadAfterSeconds: 3,
        poolSize: 0,
        objectStore: 's3',
        s3Endpoint: s3.endpoint,
        s3Bucket: BUCKET,
        s3AccessKeyId: s3.accessKeyId,
        s3SecretAccessKey: s3.secretAccessKey,
        artifactGcGraceSeconds: 0,
      },
    });
    [a, b] = await Promise.all([
      startServerProcess({ ...shared, SANDBOXD_NODE_ID: 'node-a', SANDBOXD_DATA_DIR: aDataDir }, 120_000),
      startServerProcess({ ...shared, SANDBOXD_NODE_ID: 'node-b', SANDBOXD_DATA_DIR: bDataDir }, 120_000),
    ]);
    alice = (await c.createUserWithKey('alice', 'pro')).apiKey;
    const admin = await c.services.users.create({ username: 'root', password: 'root-password-long', isAdmin: true });
    root = (await c.services.apiKeys.create(admin.id, {})).fullKey;
  });

  after(async () => {
    await Promise.allSettled([a?.stop(), b?.stop()]);
    await c?.close();
    await Promise.allSettled([postgres?.stop(), s3?.stop(), registry?.stop(), layout?.remove()]);
    for (const dir of [aDataDir, bDataDir]) {
      fs.rmSync(loadConfig({ SANDBOXD_DATA_DIR: dir }).vm.vmSnapshotDir, { recursive: true, force: true });
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a template built through node A starts a VM on node B', async () => {
    const created = await onNode(a!, 'POST', '/v1/templates', alice, { name: 'debian-anywhere', oci_image: reference, vcpu_count: 1, memory_mb: 512 });
    assert.equal(created.status, 202, created.text);
    const templateId = created.body.template_id as string;
    let template: any;
    await waitUntil(
      'the template built on A',
      async () => {
        template = (await onNode(a!, 'GET', `/v1/templates/${templateId}`, alice)).body;
        return template.status !== 'building';
      },
      15 * 60_000,
      2000,
    );
    assert.equal(template.status, 'ready', JSON.stringify(template));
    const started = await onNode(b!, 'POST', '/v1/vms', alice, { template: 'debian-anywhere', vcpu_count: 1, memory_mb: 512, vm_lifetime_seconds: 600 });
    assert.equal(started.status, 200, started.text);
    assert.equal((await vmRow(started.body.vm_id)).node_id, 'node-b');
    const run = await onNode(b!, 'POST', '/execute', alice, { session_id: started.body.session_id, language: 'bash', command: 'cat /etc/sandboxd-test-layer' });
    assert.equal(run.status, 200, run.text);
    assert.equal(run.body.stdout.trim(), 'added by the second layer', "the template's own files, on B");
    const bCaptures = loadConfig({ SANDBOXD_DATA_DIR: bDataDir }).vm.vmSnapshotDir;
    assert.ok(fs.existsSync(path.join(bCaptures, 'templates', templateId, 'template.json')), 'B has its own copy of the template');
    assert.equal((await onNode(b!, 'DELETE', `/v1/vms/${started.body.vm_id}`, alice)).status, 200);
  });

  test('a volume written by a VM on B is read by a VM on C', async () => {
    const created = await onNode(b!, 'POST', '/v1/volumes', alice, { name: 'shared-data', size_mb: 64 });
    assert.equal(created.status, 201, created.text);
    const volumeId = created.body.volume_id as string;
    assert.equal(created.body.node_id, 'node-b');
    const writer = await onNode(b!, 'POST', '/v1/vms', alice, { vm_lifetime_seconds: 600, volumes: [{ volume_id: volumeId, mount_path: '/data' }] });
    assert.equal(writer.status, 200, writer.text);
    assert.equal((await vmRow(writer.body.vm_id)).node_id, 'node-b');
    const wrote = await onNode(b!, 'POST', '/execute', alice, {
      session_id: writer.body.session_id,
      language: 'bash',
      command: 'echo written-on-b > /data/note',
    });
    assert.equal(wrote.status, 200, wrote.text);
    // While B's VM writes it, C may not mount it (one writer, cluster-wide).
    const refused = await call(c, 'POST', '/v1/vms', { apiKey: alice, json: { volumes: [{ volume_id: volumeId, mount_path: '/data', read_only: true }] } });
    assert.equal(refused.status, 409, refused.text);
    assert.equal((await onNode(b!, 'DELETE', `/v1/vms/${writer.body.vm_id}`, alice)).status, 200);
    const record = await call(c, 'GET', `/v1/volumes/${volumeId}`, { apiKey: alice });
    assert.equal(record.body.in_object_store, true, record.text);

    const reader = await call(c, 'POST', '/v1/vms', {
      apiKey: alice,
      json: { vm_lifetime_seconds: 600, volumes: [{ volume_id: volumeId, mount_path: '/data' }] },
    });
    assert.equal(reader.status, 200, reader.text);
    assert.equal((await vmRow(reader.body.vm_id)).node_id, 'node-c');
    const read = await call(c, 'POST', '/execute', {
      apiKey: alice,
      json: { session_id: reader.body.session_id, language: 'bash', command: 'cat /data/note' },
    });
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.stdout.trim(), 'written-on-b');
    assert.equal((await call(c, 'GET', `/v1/volumes/${volumeId}`, { apiKey: alice })).body.node_id, 'node-c', 'its writer now is on C');
    assert.equal((await call(c, 'DELETE', `/v1/vms/${reader.body.vm_id}`, { apiKey: alice })).status, 200);
  });

  let sessionId: string;
  let pausedVmId: string;
  let snapshotId: string;

  test('a VM paused on A is resumed through C after A is SIGKILLed: its variable, file and background process intact', async () => {
    const session = await onNode(a!, 'POST', '/v1/sessions/session', alice, { vcpu_count: 1, vm_lifetime_seconds: 1200 });
    assert.equal(session.status, 200, session.text);
    sessionId = session.body.session_id;
    const python = await onNode(a!, 'POST', '/execute', alice, { session_id: sessionId, command: 'answer = 6 * 7\nprint(answer)' });
    assert.equal(python.status, 200, python.text);
    const setUp = await onNode(a!, 'POST', '/execute', alice, {
      session_id: sessionId,
      language: 'bash',
      command: 'echo kept-on-a > /root/note.txt; nohup sleep 100000 > /dev/null 2>&1 & echo $!',
    });
    assert.equal(setUp.status, 200, setUp.text);
    const sleeper = setUp.body.stdout.trim();
    const vm = await c.services.database.db.selectFrom('vms').select(['id', 'node_id']).where('session_id', '=', sessionId).executeTakeFirstOrThrow();
    assert.equal(vm.node_id, 'node-a');
    pausedVmId = vm.id;

    const paused = await onNode(a!, 'POST', `/v1/vms/${pausedVmId}/pause`, alice);
    assert.equal(paused.status, 200, paused.text);
    a!.process.kill('SIGKILL');
    await new Promise((resolve) => a!.process.once('exit', resolve));
    // A's disk is gone too: whatever C resumes, it cannot have read it from A's directories.
    fs.rmSync(loadConfig({ SANDBOXD_DATA_DIR: aDataDir }).vm.vmSnapshotDir, { recursive: true, force: true });

    const resumed = await call(c, 'POST', '/execute', { apiKey: alice, json: { session_id: sessionId, command: 'print(answer)' } });
    assert.equal(resumed.status, 200, resumed.text);
    assert.equal(resumed.body.stdout.trim(), '42', 'the Python variable');
    const row = await vmRow(pausedVmId);
    assert.deepEqual([row.status, row.node_id], ['active', 'node-c'], 'the same VM, now on C');
    const checks = await call(c, 'POST', '/execute', {
      apiKey: alice,
      json: { session_id: sessionId, language: 'bash', command: `cat /root/note.txt; kill -0 ${sleeper} && echo alive` },
    });
    assert.equal(checks.status, 200, checks.text);
    assert.equal(checks.body.stdout.trim(), 'kept-on-a\nalive', 'the file and the background process');
  });

  test('a snapshot taken on C starts a VM on B', async () => {
    const taken = await call(c, 'POST', `/v1/vms/${pausedVmId}/snapshot`, { apiKey: alice, json: { name: 'from-c' } });
    assert.equal(taken.status, 200, taken.text);
    snapshotId = taken.body.snapshot_id ?? taken.body.id;
    // Snapshots reach the object store in the background.
    await waitUntil(
      'the snapshot in the object store',
      async () => (await call(c, 'GET', '/v1/admin/storage', { apiKey: root })).body.by_kind.snapshot.artifacts === 1,
      120_000,
      500,
    );
    const started = await onNode(b!, 'POST', '/v1/vms', alice, { snapshot: 'from-c', vm_lifetime_seconds: 600 });
    assert.equal(started.status, 200, started.text);
    assert.equal((await vmRow(started.body.vm_id)).node_id, 'node-b');
    const run = await onNode(b!, 'POST', '/execute', alice, { session_id: started.body.session_id, language: 'bash', command: 'cat /root/note.txt' });
    assert.equal(run.body.stdout.trim(), 'kept-on-a');
    assert.equal((await onNode(b!, 'DELETE', `/v1/vms/${started.body.vm_id}`, alice)).status, 200);
  });

  test('a drained node hands its paused VMs to the cluster: a request through C resumes the VM on B', async () => {
    const paused = await call(c, 'POST', `/v1/vms/${pausedVmId}/pause`, { apiKey: alice });
    assert.equal(paused.status, 200, paused.text);
    await c.services.sandbox.nodes.setDrained('node-c', true);
    try {
      const resumed = await call(c, 'POST', '/execute', { apiKey: alice, json: { session_id: sessionId, command: 'print(answer)' } });
      assert.equal(resumed.status, 200, resumed.text);
      assert.equal(resumed.body.stdout.trim(), '42');
      const row = await vmRow(pausedVmId);
      assert.deepEqual([row.status, row.node_id], ['active', 'node-b'], 'resumed on B, reached through C');
    } finally {
      await c.services.sandbox.nodes.setDrained('node-c', false);
    }
  });

  test('storage: bytes by kind and user, each node cache; garbage collection frees unreferenced chunks only', async () => {
    const report = await call(c, 'GET', '/v1/admin/storage', { apiKey: root });
    assert.equal(report.status, 200, report.text);
    assert.equal(report.body.enabled, true);
    assert.equal(report.body.by_kind.pause.artifacts, 0, 'the resumed pause was consumed');
    assert.equal(report.body.by_kind.template.artifacts, 1);
    assert.ok(report.body.by_kind.variant.artifacts >= 2, 'the template shape and the built-in shape');
    assert.ok(report.body.by_user.length >= 1 && report.body.by_user[0].usage.data_bytes > 0);
    const nodes = new Map<string, any>(report.body.nodes.map((node: any) => [node.node_id, node]));
    assert.ok(nodes.get('node-c')?.misses >= 1, JSON.stringify(report.body.nodes));
    assert.equal((await call(c, 'GET', '/v1/admin/storage', { apiKey: alice })).status, 403);

    const dry = await call(c, 'POST', '/v1/admin/storage/gc?dry_run=true', { apiKey: root });
    assert.equal(dry.status, 200, dry.text);
    assert.ok(dry.body.deleted > 0, `the consumed pause left chunks nothing references: ${dry.text}`);
    const collected = await call(c, 'POST', '/v1/admin/storage/gc', { apiKey: root });
    assert.equal(collected.status, 200, collected.text);
    assert.equal(collected.body.deleted, dry.body.deleted);
    const after = (await call(c, 'GET', '/v1/admin/storage', { apiKey: root })).body;
    assert.equal(after.chunks.count, report.body.chunks.count - collected.body.deleted);
    // None the snapshot references went: B, which evicts nothing, has it; a node that fetches it again (C after its
    // copy is removed) gets every chunk back.
    fs.rmSync(path.join(c.config.vm.vmSnapshotDir, 'snapshots', snapshotId), { recursive: true, force: true });
    const started = await call(c, 'POST', '/v1/vms', { apiKey: alice, json: { snapshot: 'from-c', vm_lifetime_seconds: 600 } });
    assert.equal(started.status, 200, started.text);
    const run = await call(c, 'POST', '/execute', {
      apiKey: alice,
      json: { session_id: started.body.session_id, language: 'bash', command: 'cat /root/note.txt' },
    });
    assert.equal(run.body.stdout.trim(), 'kept-on-a');
    assert.equal((await call(c, 'DELETE', `/v1/vms/${started.body.vm_id}`, { apiKey: alice })).status, 200);
  });

  test('the object store stopped: a pause fails with 503 and the VM runs on, its state intact', async () => {
    await s3.stop();
    const paused = await onNode(b!, 'POST', `/v1/vms/${pausedVmId}/pause`, alice);
    assert.equal(paused.status, 503, paused.text);
    assert.equal(paused.body.code, 'OBJECT_STORE_UNAVAILABLE', paused.text);
    assert.match(paused.text, /runs on/);
    assert.deepEqual([(await vmRow(pausedVmId)).status, (await vmRow(pausedVmId)).node_id], ['active', 'node-b']);
    const run = await onNode(b!, 'POST', '/execute', alice, { session_id: sessionId, command: 'print(answer)' });
    assert.equal(run.status, 200, run.text);
    assert.equal(run.body.stdout.trim(), '42');
  });
});
