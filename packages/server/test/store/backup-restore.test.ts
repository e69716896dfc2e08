/**
 * `sandboxd backup` while the real server serves, then stop, wipe, `sandboxd restore`, start again: the
 * sessions, keys and webhooks are back. And the refusals, each leaving the data directory as it was: a restore
 * onto a running server, an archive whose file no longer matches its checksum, an archive from a newer schema, a
 * truncated archive, one with a symbolic link in it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { create as createTar, extract } from 'tar';
import { loadConfig } from '../../src/config/index.ts';
import { DATA_FILES } from '../../src/cli/backup/layout.ts';
import { runAdminCommand, SERVER_ROOT, startServerProcess, type RunningServer } from '../helpers/processes.ts';

/** The admin command (its sources, as runAdminCommand runs them) as a child process beside the test: spawnSync would stop the event loop. */
function runAdminCommandAsync(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/admin.ts', ...args], {
      cwd: SERVER_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** An archive made from `archive` after `change` edits its extracted contents. */
async function alteredArchive(archive: string, change: (dir: string) => void): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-altered-'));
  await extract({ file: archive, cwd: dir });
  change(dir);
  const file = `${dir}.tar.gz`;
  await createTar(
    { gzip: true, file, cwd: dir },
    fs.readdirSync(dir).sort((a, b) => (a === 'manifest.json' ? -1 : b === 'manifest.json' ? 1 : a.localeCompare(b))),
  );
  fs.rmSync(dir, { recursive: true, force: true });
  return file;
}

describe('sandboxd backup and restore', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-backup-test-'));
  const dataDir = path.join(root, 'data');
  const env = {
    SANDBOXD_DATA_DIR: dataDir,
    SANDBOXD_POOL_SIZE: '0',
    SANDBOXD_BROWSER_POOL_SIZE: '0',
    SANDBOXD_DESKTOP_POOL_SIZE: '0',
    SANDBOXD_LOG_LEVEL: 'info',
  };
  const archive = path.join(root, 'backup.tar.gz');
  let server: RunningServer | undefined;
  let userKey: string;
  let adminKey: string;
  const sessions: { id: string; metadata: Record<string, string> }[] = [];
  let webhookId: string;

  const api = async (method: string, url: string, key: string, body?: unknown) => {
    const response = await fetch(`${server!.baseUrl}${url}`, {
      method,
      headers: { 'x-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined, text };
  };
  /**
   * What a refused restore must leave as it was: the data directory's files (each the same file: a restore replaces
   * or moves aside, which changes the inode), the keys' contents, and nothing beside it. Not the store's mtime: the
   * running server's own background loops write it whenever SQLite checkpoints its WAL.
   */
  const snapshotOfDataDir = () =>
    JSON.stringify({
      files: fs
        .readdirSync(dataDir)
        .sort()
        .map((name) => [name, fs.statSync(path.join(dataDir, name)).ino]),
      keys: ['admin-api-key', 'vault.key'].map((name) => fs.readFileSync(path.join(dataDir, name), 'utf8')),
      siblings: fs.readdirSync(root).sort(),
    });

  before(async () => {
    server = await startServerProcess(env);
    adminKey = fs.readFileSync(path.join(dataDir, 'admin-api-key'), 'utf8').trim();
  });
  after(async () => {
    await server?.stop();
    fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(loadConfig({ SANDBOXD_DATA_DIR: dataDir }).vm.vmSnapshotDir, { recursive: true, force: true });
  });

  test('a backup taken while the server serves (and writes) holds every session, key and webhook made before it', async () => {
    const user = runAdminCommand(['user', 'create', 'dana', '--password', 'dana-backup-password', '--json'], env);
    assert.equal(user.status, 0, user.stderr);
    const key = runAdminCommand(['key', 'create', 'dana', '--json'], env);
    assert.equal(key.status, 0, key.stderr);
    userKey = JSON.parse(key.stdout).full_key;
    for (const team of ['search', 'ads']) {
      const created = await api('POST', '/v1/sessions/session', userKey, { metadata: { team } });
      assert.equal(created.status, 200, created.text);
      sessions.push({ id: created.body.session_id, metadata: { team } });
    }
    const webhook = await api('POST', '/v1/webhooks/endpoints', userKey, { url: 'https://hooks.example.com/backup', event_patterns: ['session.*'] });
    assert.equal(webhook.status, 200, webhook.text);
    webhookId = webhook.body.id;

    // The backup runs while requests keep writing to the store.
    const backup = runAdminCommandAsync(['backup', '--output', archive, '--json'], env);
    let writes = 0;
    let done = false;
    void backup.then(() => (done = true));
    while (!done) {
      assert.equal((await api('POST', '/v1/sessions/session', userKey, { metadata: { during: 'backup' } })).status, 200);
      writes++;
    }
    const result = await backup;
    assert.equal(result.status, 0, result.stderr);
    assert.ok(writes > 0, 'the server took writes while the backup ran');
    const answer = JSON.parse(result.stdout);
    assert.equal(answer.file, archive);
    assert.equal(answer.store, 'sqlite');
    assert.equal(answer.vault_key_included, true);
    assert.match(result.stderr, /store: copied/, 'progress on stderr');
    assert.equal(fs.statSync(archive).mode & 0o777, 0o600, 'the archive holds credentials: owner only');
    assert.deepEqual(
      fs.readdirSync(root).filter((name) => name !== 'data' && name !== 'backup.tar.gz'),
      [],
      'no staging folder or partial file is left',
    );

    const listed = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-backup-list-'));
    try {
      await extract({ file: archive, cwd: listed, filter: (p) => p === 'manifest.json' });
      const manifest = JSON.parse(fs.readFileSync(path.join(listed, 'manifest.json'), 'utf8'));
      assert.equal(manifest.format_version, 1);
      assert.match(manifest.release, /^\d+\.\d+\.\d+/);
      assert.ok(manifest.store.latest_migration);
      const paths = manifest.files.map((f: { path: string }) => f.path);
      for (const expected of ['data/sandboxd.db', 'data/vault.key', 'data/admin-api-key']) assert.ok(paths.includes(expected), `${expected} is in it`);
      assert.ok(!paths.some((p: string) => p.startsWith('data/vms/') || p.endsWith('-wal')), 'run state and the WAL are not');
      for (const file of manifest.files) assert.match(file.sha256, /^[0-9a-f]{64}$/);
    } finally {
      fs.rmSync(listed, { recursive: true, force: true });
    }
  });

  test('every file the running server keeps in its data directory is either backed up or left out on purpose', () => {
    // A new file in the data directory must be classed in src/cli/backup/layout.ts (and the docs): in or out.
    const classed = new Set([...DATA_FILES.map((f) => f.name), 'sandboxd.db', 'sandboxd.db-wal', 'sandboxd.db-shm', 'objects', 'vms']);
    const unclassed = fs.readdirSync(dataDir).filter((name) => !classed.has(name));
    assert.deepEqual(unclassed, [], `not classed in src/cli/backup/layout.ts: ${unclassed.join(', ')}`);
  });

  test('a restore onto the running server is refused, and changes nothing', async () => {
    const before = snapshotOfDataDir();
    const refused = runAdminCommand(['restore', archive, '--force'], env);
    assert.equal(refused.status, 1, refused.stderr);
    assert.match(refused.stderr, /a sandboxd server is running/);
    assert.equal(snapshotOfDataDir(), before);
  });

  test('stop, wipe, restore, start: the sessions, keys and webhooks are back', async () => {
    assert.equal(await server!.stop(), 0);
    server = undefined;

    // One character changed, the size kept: only the checksum tells.
    const damaged = await alteredArchive(archive, (dir) => {
      const file = path.join(dir, 'data', 'admin-api-key');
      const text = fs.readFileSync(file, 'utf8');
      fs.writeFileSync(file, `${text[0] === 'x' ? 'y' : 'x'}${text.slice(1)}`);
    });
    const future = await alteredArchive(archive, (dir) => {
      const file = path.join(dir, 'manifest.json');
      const manifest = JSON.parse(fs.readFileSync(file, 'utf8'));
      manifest.store.migrations.push('9999-from-a-newer-release');
      fs.writeFileSync(file, JSON.stringify(manifest));
    });
    const linked = await alteredArchive(archive, (dir) => fs.symlinkSync('/etc/passwd', path.join(dir, 'data', 'passwd')));
    const truncated = path.join(root, 'truncated.tar.gz');
    fs.writeFileSync(truncated, fs.readFileSync(archive).subarray(0, Math.floor(fs.statSync(archive).size / 2)));
    try {
      const before = snapshotOfDataDir();
      const checksum = runAdminCommand(['restore', damaged, '--force'], env);
      assert.equal(checksum.status, 1, checksum.stderr);
      assert.match(checksum.stderr, /damaged, nothing was restored: data\/admin-api-key: its SHA-256 differs/);
      const newer = runAdminCommand(['restore', future, '--force'], env);
      assert.equal(newer.status, 1, newer.stderr);
      assert.match(newer.stderr, /newer schema than this release .* 9999-from-a-newer-release/);
      const cut = runAdminCommand(['restore', truncated, '--force'], env);
      assert.equal(cut.status, 1, cut.stderr);
      assert.match(cut.stderr, /cannot be read as a sandboxd backup/);
      const link = runAdminCommand(['restore', linked, '--force'], env);
      assert.equal(link.status, 1, link.stderr);
      assert.match(link.stderr, /holds entries a sandboxd backup never has: data\/passwd \(SymbolicLink\)/);
      const withoutForce = runAdminCommand(['restore', archive], env);
      assert.equal(withoutForce.status, 1);
      assert.match(withoutForce.stderr, /holds a deployment .*--force/);
      assert.equal(snapshotOfDataDir(), before, 'the refusals left the data directory as it was, and nothing beside it');
    } finally {
      for (const file of [damaged, future, linked, truncated]) fs.rmSync(file, { force: true });
    }

    fs.rmSync(dataDir, { recursive: true, force: true });
    const restored = runAdminCommand(['restore', archive, '--json'], env);
    assert.equal(restored.status, 0, restored.stderr);
    assert.deepEqual(JSON.parse(restored.stdout).moved_aside, []);
    assert.equal(fs.statSync(path.join(dataDir, 'vault.key')).mode & 0o777, 0o600);

    server = await startServerProcess(env);
    for (const key of [userKey, adminKey]) assert.equal((await api('GET', '/v1/api-keys/', key)).status, 200, 'the key authenticates');
    for (const session of sessions) {
      const found = await api('GET', `/v1/sessions/session/${session.id}`, userKey);
      assert.equal(found.status, 200, found.text);
      assert.deepEqual(found.body.metadata, session.metadata);
    }
    const webhooks = await api('GET', '/v1/webhooks/endpoints', userKey);
    assert.deepEqual(
      webhooks.body.map((w: { id: string }) => w.id),
      [webhookId],
    );
  });

  test('a restore with --force over a deployment moves it aside, never deletes it', async () => {
    assert.equal(await server!.stop(), 0);
    server = undefined;
    const forced = runAdminCommand(['restore', archive, '--force', '--json'], env);
    assert.equal(forced.status, 0, forced.stderr);
    const [aside] = JSON.parse(forced.stdout).moved_aside as string[];
    assert.match(aside!, /data\.before-restore-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ$/);
    assert.ok(fs.existsSync(path.join(aside!, 'sandboxd.db')), 'the old store is kept');
    assert.ok(fs.existsSync(path.join(dataDir, 'sandboxd.db')));
  });
});
