/**
 * `sandboxd backup` and `restore` on a PostgreSQL deployment: the archive holds the node's files and says the
 * database is pg_dump's job (its manifest records the database's schema); a restore is refused while the node is
 * live in the registry, and on a node configured for the other store.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { extract } from 'tar';
import { startPostgres, type PostgresServer } from '../helpers/postgres.ts';
import { runAdminCommand } from '../helpers/processes.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

describe('sandboxd backup and restore with PostgreSQL', () => {
  let postgres: PostgresServer;
  let server: TestServer | undefined;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-backup-pg-'));
  const archive = path.join(root, 'files.tar.gz');
  const dataDir = path.join(root, 'data');
  let env: Record<string, string>;
  let vmSnapshotDir = '';

  before(async () => {
    postgres = await startPostgres();
    // A data directory of the test's own: the server leaves it in place when it closes.
    server = await startTestServer({ dataDir, config: { databaseUrl: postgres.url, nodeId: 'node-pg', warmVcpus: [] } });
    vmSnapshotDir = server.config.vm.vmSnapshotDir;
    env = { SANDBOXD_DATA_DIR: dataDir, SANDBOXD_DATABASE_URL: postgres.url, SANDBOXD_NODE_ID: 'node-pg' };
  });
  after(async () => {
    await server?.close();
    await postgres?.stop();
    fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(vmSnapshotDir, { recursive: true, force: true });
  });

  test('the archive holds the files, not the database, and records its schema', async () => {
    const backup = runAdminCommand(['backup', '--output', archive, '--json'], env);
    assert.equal(backup.status, 0, backup.stderr);
    assert.match(backup.stderr, /PostgreSQL .* pg_dump/);
    const answer = JSON.parse(backup.stdout);
    assert.deepEqual([answer.store, answer.store_included], ['postgres', false]);
    const listed = path.join(root, 'listed');
    fs.mkdirSync(listed);
    await extract({ file: archive, cwd: listed });
    const manifest = JSON.parse(fs.readFileSync(path.join(listed, 'manifest.json'), 'utf8'));
    assert.ok(manifest.store.migrations.length > 20, 'the database’s migrations are recorded');
    assert.ok(!fs.existsSync(path.join(listed, 'data', 'sandboxd.db')));
    assert.ok(fs.existsSync(path.join(listed, 'data', 'vault.key')), 'the node’s vault key is in it');
  });

  test('a restore is refused while the node is live, and on a node configured for SQLite', async () => {
    const live = runAdminCommand(['restore', archive, '--force'], env);
    assert.equal(live.status, 1, live.stderr);
    assert.match(live.stderr, /node node-pg is live in the cluster/);

    const stopping = server!;
    server = undefined;
    await stopping.close();
    const sqliteDir = path.join(root, 'sqlite-node');
    const wrongStore = runAdminCommand(['restore', archive], { SANDBOXD_DATA_DIR: sqliteDir });
    assert.equal(wrongStore.status, 1);
    assert.match(wrongStore.stderr, /made on a PostgreSQL deployment .* SANDBOXD_DATABASE_URL/);
    assert.ok(!fs.existsSync(sqliteDir) || fs.readdirSync(sqliteDir).length === 0, 'nothing was restored there');

    const restored = runAdminCommand(['restore', archive, '--force', '--json'], env);
    assert.equal(restored.status, 0, restored.stderr);
    assert.match(JSON.parse(restored.stdout).moved_aside[0], /before-restore/);
    assert.ok(fs.existsSync(path.join(dataDir, 'vault.key')), 'the files are back');
  });
});
