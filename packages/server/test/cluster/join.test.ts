/**
 * Joining a machine with a cluster token: `sandboxd cluster token` on a node prints it, `sandboxd node join`
 * on another data directory checks it against the shared PostgreSQL and writes the settings (0600), and a
 * server started on that data directory with no cluster environment at all is then a live node of the
 * cluster, signing with the same secret. Damaged tokens, the embedded store and a taken node id are refused
 * with what to do, and nothing is written.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startPostgres, type PostgresServer } from '../helpers/postgres.ts';
import { runAdminCommand } from '../helpers/processes.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { waitUntil } from '../helpers/wait.ts';

describe('sandboxd cluster token / node join', () => {
  let postgres: PostgresServer;
  let first: TestServer;
  let joined: TestServer | undefined;
  const joinDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-join-'));
  let token: string;

  before(async () => {
    postgres = await startPostgres();
    first = await startTestServer({ config: { databaseUrl: postgres.url, nodeId: 'node-1', warmVcpus: [] } });
  });
  after(async () => {
    await joined?.close();
    await first?.close();
    await postgres?.stop();
    fs.rmSync(joinDir, { recursive: true, force: true });
  });

  test('a node of the cluster prints its token; a node on the embedded store cannot', () => {
    const printed = runAdminCommand(['cluster', 'token', '--json'], { SANDBOXD_DATA_DIR: first.dataDir, SANDBOXD_DATABASE_URL: postgres.url });
    assert.equal(printed.status, 0, printed.stderr);
    token = JSON.parse(printed.stdout).token;
    assert.match(token, /^sbxd-cluster-v1\.[A-Za-z0-9_-]+$/);
    const embedded = runAdminCommand(['cluster', 'token'], { SANDBOXD_DATA_DIR: joinDir });
    assert.equal(embedded.status, 1);
    assert.match(embedded.stderr, /SANDBOXD_DATABASE_URL/);
  });

  test('damaged tokens and taken node ids are refused, and nothing is written', () => {
    for (const bad of ['nonsense', 'sbxd-cluster-v1.!!!', `sbxd-cluster-v1.${Buffer.from('{"database_url":"mysql://x"}').toString('base64url')}`]) {
      const refused = runAdminCommand(['node', 'join', bad], { SANDBOXD_DATA_DIR: joinDir });
      assert.equal(refused.status, 1, bad);
      assert.match(refused.stderr, /cluster token/, refused.stderr);
    }
    const taken = runAdminCommand(['node', 'join', token, '--node-id', 'node-1'], { SANDBOXD_DATA_DIR: joinDir });
    assert.equal(taken.status, 1);
    assert.match(taken.stderr, /already called node-1/);
    assert.ok(!fs.existsSync(path.join(joinDir, 'cluster.json')));
  });

  test('node join writes the settings; a server started there joins the cluster with no other configuration', async () => {
    const ran = runAdminCommand(['node', 'join', token, '--node-id', 'node-2', '--internal-url', 'http://127.0.0.1:1/', '--json'], {
      SANDBOXD_DATA_DIR: joinDir,
    });
    assert.equal(ran.status, 0, ran.stderr);
    const answer = JSON.parse(ran.stdout);
    assert.deepEqual(answer.live_nodes, ['node-1']);
    assert.equal(answer.node_id, 'node-2');
    assert.doesNotMatch(ran.stderr, new RegExp(new URL(postgres.url).password || 'no-password-in-url'), 'the password is not shown');
    const file = path.join(joinDir, 'cluster.json');
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    const settings = JSON.parse(fs.readFileSync(file, 'utf8'));
    assert.equal(settings.SANDBOXD_DATABASE_URL, postgres.url);
    assert.equal(settings.SANDBOXD_NODE_ID, 'node-2');

    // The test server passes no cluster settings: they come from the data directory's file. Its internal URL
    // is its own internal listener's here (the joined value names a port nobody serves).
    joined = await startTestServer({ dataDir: joinDir, config: { warmVcpus: [], internalUrl: '' } });
    assert.equal(joined.config.server.databaseUrl, postgres.url);
    assert.equal(joined.config.cluster.nodeId, 'node-2');
    await waitUntil(
      'node-2 live in the shared table',
      async () => (await first.services.sandbox.nodes.list()).some((n) => n.id === 'node-2' && n.state === 'live'),
      15_000,
      100,
    );
    // Same secret: node-1's signature for node-2 opens node-2's internal endpoint.
    const signed = first.services.internalAuth.sign({ method: 'GET', pathWithQuery: '/internal/v1/probe', destination: 'node-2' });
    assert.equal(joined.services.internalAuth.verify('GET', '/internal/v1/probe', signed, null), 'node-1');
  });
});
