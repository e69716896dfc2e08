// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * Worker control and the node table on one node (the embedded store): the admin listener serves GET /workers,
 * drain, undrain and deployment drain to the admin token only; the public listener refuses them for everyone;
 * a node that stops heartbeating is declared dead by the next heartbeat of a live one; a node that finds itself
 * declared dead registers again. No VM is needed: these are store and HTTP behaviours.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/index.ts';
import { findNode, upsertNode } from '../../src/store/nodes-store.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

describe('worker control (admin listener) and the node table', () => {
  let server: TestServer;
  let admin: { baseUrl: string };
  let token: string;
  let user: { apiKey: string };

  before(async () => {
    server = await startTestServer();
    assert.ok(server.adminUrl, 'the admin listener is on by default');
    admin = { baseUrl: server.adminUrl };
    token = fs.readFileSync(path.join(server.dataDir, 'admin-token'), 'utf8').trim();
    assert.equal(fs.statSync(path.join(server.dataDir, 'admin-token')).mode & 0o777, 0o600);
    user = await server.createUserWithKey('alice');
  });
  after(() => server.close());

  test('the admin listener is on loopback, one port above the public one unless configured', () => {
    assert.match(server.adminUrl!, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(server.adminUrl, server.baseUrl);
    assert.equal(loadConfig({ SANDBOXD_PORT: '8080' }).server.adminListen, '127.0.0.1:8081');
    assert.equal(loadConfig({ SANDBOXD_ADMIN_LISTEN: 'off' }).server.adminListen, 'off');
    assert.throws(() => loadConfig({ SANDBOXD_ADMIN_LISTEN: 'nowhere' }), /SANDBOXD_ADMIN_LISTEN/);
    assert.throws(() => loadConfig({ SANDBOXD_NODE_HEARTBEAT_SECONDS: '20', SANDBOXD_NODE_DEAD_AFTER_SECONDS: '30' }), /more than twice/);
  });

  test('GET /workers lists this node, live, with its capacity and load', async () => {
    const { status, body } = await call(admin, 'GET', '/workers', { bearer: token });
    assert.equal(status, 200);
    assert.equal(body.workers.length, 1);
    const [self] = body.workers;
    assert.equal(self.worker_id, server.config.cluster.nodeId);
    assert.equal(self.state, 'live');
    assert.equal(self.this_node, true);
    assert.equal(self.drained, false);
    assert.equal(self.capacity.vcpus, server.config.cluster.nodeVcpus);
    assert.equal(self.load.running_vms, 0);
    assert.equal(self.internal_url, server.internalUrl);
    assert.ok(self.templates.includes('default'));
  });

  test('anonymous callers and wrong tokens get 401; the public listener answers 403 to everyone, before reading the body', async () => {
    assert.equal((await call(admin, 'GET', '/workers')).status, 401);
    assert.equal((await call(admin, 'GET', '/workers', { bearer: 'sbxadm_wrong' })).status, 401);
    assert.equal((await call(admin, 'POST', `/workers/${server.config.cluster.nodeId}/drain`, { headers: { 'x-api-key': user.apiKey } })).status, 401);
    for (const url of [
      `/workers/${server.config.cluster.nodeId}/drain`,
      `/workers/${server.config.cluster.nodeId}/undrain`,
      `/workers/${server.config.cluster.nodeId}/deployment-drain/start`,
    ]) {
      assert.equal((await call(server, 'POST', url)).status, 403, url);
      assert.equal((await call(server, 'POST', url, { apiKey: user.apiKey, json: {} })).status, 403, url);
      const withToken = await call(server, 'POST', url, { bearer: token, json: { reason: 'x' } });
      assert.equal(withToken.status, 403, `the admin token does not open the public listener either: ${url}`);
      assert.match(withToken.body.detail, /admin listener/);
    }
    assert.equal((await call(admin, 'GET', '/workers', { bearer: token })).body.workers[0].drained, false, 'nothing was drained');
  });

  test('drain and undrain set the node state; an unknown node is 404', async () => {
    const id = server.config.cluster.nodeId;
    const drained = await call(admin, 'POST', `/workers/${id}/drain`, { bearer: token });
    assert.equal(drained.status, 200);
    assert.equal(drained.body.drained, true);
    assert.equal((await findNode(server.services.database.db, id))!.drained, 1);
    const undrained = await call(admin, 'POST', `/workers/${id}/undrain`, { bearer: token });
    assert.equal(undrained.body.drained, false);
    assert.equal((await call(admin, 'POST', '/workers/no-such-node/drain', { bearer: token })).status, 404);
  });

  test('deployment drain: start drains and, with nothing running, is done at once; cancel undrains; a bad action is 422', async () => {
    const id = server.config.cluster.nodeId;
    const started = await call(admin, 'POST', `/workers/${id}/deployment-drain/start`, { bearer: token, json: { reason: 'upgrade' } });
    assert.equal(started.status, 200, started.text);
    assert.equal(started.body.drained, true);
    assert.equal(started.body.running_vms, 0);
    assert.equal(started.body.deployment_drain, 'done');
    const status = await call(admin, 'POST', `/workers/${id}/deployment-drain/status`, { bearer: token, json: {} });
    assert.equal(status.body.deployment_drain, 'done');
    const cancelled = await call(admin, 'POST', `/workers/${id}/deployment-drain/cancel`, { bearer: token, json: {} });
    assert.equal(cancelled.body.drained, false);
    assert.equal(cancelled.body.deployment_drain, 'cancelled');
    assert.equal((await call(admin, 'POST', `/workers/${id}/deployment-drain/explode`, { bearer: token, json: {} })).status, 422);
  });

  test('a node whose heartbeats stopped is declared dead by the next heartbeat; this node re-registers if it was declared dead', async () => {
    const db = server.services.database.db;
    const old = new Date(Date.now() - 10 * 60_000).toISOString();
    await upsertNode(db, {
      id: 'silent-node',
      internal_url: 'http://127.0.0.1:1',
      state: 'live',
      drained: 0,
      deployment_drain: null,
      vcpus: 2,
      memory_mb: 2048,
      vm_slots: 8,
      templates: '["default"]',
      running_vms: 0,
      used_vcpus: 0,
      used_memory_mb: 0,
      version: '0.1.0',
      started_at: old,
      heartbeat_at: old,
      dead_at: null,
    });
    await server.services.sandbox.nodes.beat();
    const silent = await findNode(db, 'silent-node');
    assert.equal(silent!.state, 'dead');
    assert.ok(silent!.dead_at);
    assert.equal((await findNode(db, server.config.cluster.nodeId))!.state, 'live');

    await db.updateTable('cluster_nodes').set({ state: 'dead' }).where('id', '=', server.config.cluster.nodeId).execute();
    await server.services.sandbox.nodes.beat();
    assert.equal((await findNode(db, server.config.cluster.nodeId))!.state, 'live', 'declared dead while alive: registered again');
    const listed = await call(admin, 'GET', '/workers', { bearer: token });
    assert.deepEqual(
      listed.body.workers.map((w: { worker_id: string; state: string }) => [w.worker_id, w.state]).sort(),
      [
        [server.config.cluster.nodeId, 'live'],
        ['silent-node', 'dead'],
      ].sort(),
    );
  });
});
