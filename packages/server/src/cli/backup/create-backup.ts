/**
 * `sandboxd backup`: a consistent copy of what cannot be rebuilt (layout.ts), taken while the server runs.
 *
 * Everything is first staged in a folder beside the output: the SQLite store through better-sqlite3's online
 * backup API (SQLite's backup: pages copied under the store's own locks, so the copy is one consistent state
 * of the store, never a torn file); objects as hard links (the object store never writes a file in place);
 * files that change in place (volumes, small files) as copies. Then every staged file is hashed into the
 * manifest, and the archive is written by the `tar` package (node-tar: no shell, no dependence on the host's tar
 * flags, and the same code lists and extracts it at restore) with the manifest first, to `<output>.partial`,
 * renamed to its name once complete: a failed backup leaves no file that looks like a backup.
 */
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { create as createTar } from 'tar';
import type { Config } from '../../config/index.ts';
import { CliError } from '../context.ts';
import { fileTimestamp, formatBytes, listFiles, mirrorDirs, progressLines, stageFile } from './files.ts';
import { backupPlaces, DATA_FILES, EXCLUDED, STORE_FILE } from './layout.ts';
import { BACKUP_FORMAT, BACKUP_FORMAT_VERSION, MANIFEST_FILE, releaseVersion, sha256Of, type BackupManifest } from './manifest.ts';

export interface BackupOptions {
  /** The archive to write (default: sandboxd-backup-<UTC timestamp>.tar.gz in the working directory). */
  output?: string;
  /** Leave the vault key out (keep it apart from the archive yourself). */
  withoutVaultKey?: boolean;
}

export interface BackupResult {
  file: string;
  manifest: BackupManifest;
  bytes: number;
}

export async function createBackup(config: Config, options: BackupOptions): Promise<BackupResult> {
  const createdAt = new Date();
  const output = path.resolve(options.output ?? `sandboxd-backup-${fileTimestamp(createdAt)}.tar.gz`);
  if (fs.existsSync(output)) throw new CliError(`${output} exists: give another --output (a backup never overwrites a file)`);
  const places = backupPlaces(config);
  const progress = progressLines();
  const staging = await fs.promises.mkdtemp(path.join(path.dirname(output), '.sandboxd-backup-'));
  const partial = `${output}.partial`;
  try {
    const store = await stageStore(config, staging, progress);

    await mirrorDirs(places.dataDir, path.join(staging, 'data'), '', new Set());
    for (const { name } of DATA_FILES) {
      if (name === 'vault.key' && options.withoutVaultKey) continue;
      const from = path.join(places.dataDir, name);
      if (fs.existsSync(from)) await stageFile(from, path.join(staging, 'data', name), false);
    }
    const vaultKeyIncluded = fs.existsSync(path.join(staging, 'data', 'vault.key'));

    if (places.objectsDir) {
      // Objects are written to `tmp/` and renamed into place whole: the partial ones are not objects yet.
      const objects = await listFiles(places.objectsDir, (relative) => relative === 'tmp');
      await stageTree('objects', places.objectsDir, objects, path.join(staging, 'objects'), true, progress);
    } else {
      process.stderr.write('objects: in the S3 store (SANDBOXD_OBJECT_STORE=s3), not in this archive: back the bucket up with its own tools\n');
    }
    const volumes = (await listFiles(places.volumesDir)).filter((name) => !name.includes(path.sep) && name.endsWith('.img'));
    if (volumes.length > 0)
      process.stderr.write(
        `volumes: ${volumes.length} image${volumes.length === 1 ? '' : 's'}; one attached to a running VM is copied as its disk is now (stop its session for a clean copy)\n`,
      );
    await stageTree('volumes', places.volumesDir, volumes, path.join(staging, 'volumes'), false, progress);

    // The manifest: every staged file with its size and hash.
    const files: BackupManifest['files'] = [];
    for (const folder of ['data', 'objects', 'volumes']) {
      for (const relative of await listFiles(path.join(staging, folder))) {
        const file = path.join(staging, folder, relative);
        files.push({ path: `${folder}/${relative.split(path.sep).join('/')}`, size: (await fs.promises.stat(file)).size, sha256: await sha256Of(file) });
        progress(`checksums: ${files.length} files`);
      }
    }
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      format_version: BACKUP_FORMAT_VERSION,
      release: releaseVersion(),
      created_at: createdAt.toISOString(),
      store,
      vault_key_included: vaultKeyIncluded,
      files,
      excluded: [...EXCLUDED, ...(options.withoutVaultKey ? [{ what: 'vault.key', why: 'left out with --without-vault-key' }] : [])],
    };
    await fs.promises.writeFile(path.join(staging, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });

    const total = files.reduce((sum, f) => sum + f.size, 0);
    process.stderr.write(`writing ${path.basename(output)}: ${files.length} files, ${formatBytes(total)}…\n`);
    const entries = [MANIFEST_FILE, ...['data', 'objects', 'volumes'].filter((folder) => fs.existsSync(path.join(staging, folder)))];
    // The archive holds the vault key and the store: readable by its owner only.
    await fs.promises.writeFile(partial, '', { mode: 0o600 });
    const ticker = setInterval(() => {
      const written = fs.statSync(partial, { throwIfNoEntry: false })?.size ?? 0;
      progress(`writing ${path.basename(output)}: ${formatBytes(written)} compressed so far`);
    }, 1000);
    try {
      await createTar({ gzip: true, file: partial, cwd: staging, mode: 0o600 }, entries);
    } finally {
      clearInterval(ticker);
    }
    await fs.promises.chmod(partial, 0o600);
    await fs.promises.rename(partial, output);
    return { file: output, manifest, bytes: (await fs.promises.stat(output)).size };
  } finally {
    await fs.promises.rm(partial, { force: true });
    await fs.promises.rm(staging, { recursive: true, force: true });
  }
}

/** Copies the store (SQLite) into the staging folder, or records the PostgreSQL store's schema; returns the manifest's `store`. */
async function stageStore(config: Config, staging: string, progress: (line: string, force?: boolean) => void): Promise<BackupManifest['store']> {
  if (config.server.databaseUrl) {
    process.stderr.write(
      'store: PostgreSQL (SANDBOXD_DATABASE_URL): this archive holds the files only; back the database up with pg_dump (docs/backup-and-upgrade.md)\n',
    );
    const migrations = await postgresMigrations(config.server.databaseUrl);
    return { kind: 'postgres', included: false, migrations, latest_migration: migrations.at(-1) ?? null };
  }
  const source = path.join(config.server.dataDir, STORE_FILE);
  if (!fs.existsSync(source)) throw new CliError(`no store at ${source}: nothing to back up (is SANDBOXD_DATA_DIR right?)`);
  const target = path.join(staging, 'data', STORE_FILE);
  await fs.promises.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
  const db = new SQLite(source, { fileMustExist: true });
  try {
    // The server writes with a busy timeout too: a step of the copy waits for its write instead of failing.
    db.pragma('busy_timeout = 5000');
    await db.backup(target, {
      progress: ({ totalPages, remainingPages }) => {
        progress(`store: ${totalPages - remainingPages}/${totalPages} pages copied`);
        return 1000;
      },
    });
  } finally {
    db.close();
  }
  // Owned like the store, so that the restored copy opens for the server's user.
  const owner = await fs.promises.stat(source);
  await fs.promises.chmod(target, owner.mode & 0o777);
  if (process.getuid?.() === 0) await fs.promises.chown(target, owner.uid, owner.gid);
  const copy = new SQLite(target, { fileMustExist: true });
  try {
    const check = copy.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new CliError(`the copy of the store fails SQLite's check (${String(check)}): the store may be damaged`);
    const migrations = (copy.prepare('select name from schema_migrations order by name').all() as { name: string }[]).map((row) => row.name);
    progress(`store: copied (${formatBytes(fs.statSync(target).size)}, schema ${migrations.at(-1) ?? 'empty'})`, true);
    return { kind: 'sqlite', included: true, migrations, latest_migration: migrations.at(-1) ?? null };
  } finally {
    copy.close();
  }
}

async function postgresMigrations(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>('select name from schema_migrations order by name');
    return rows.map((row) => row.name);
  } finally {
    await client.end();
  }
}

/** Stages the listed files of one folder, with a progress line a second for big folders. */
async function stageTree(
  label: string,
  from: string,
  files: string[],
  to: string,
  immutable: boolean,
  progress: (line: string, force?: boolean) => void,
): Promise<void> {
  if (files.length === 0) return;
  let bytes = 0;
  const made = new Set<string>();
  for (const [index, relative] of files.entries()) {
    await mirrorDirs(from, to, path.dirname(relative), made);
    await stageFile(path.join(from, relative), path.join(to, relative), immutable);
    bytes += (await fs.promises.stat(path.join(to, relative))).size;
    progress(`${label}: ${index + 1}/${files.length} files, ${formatBytes(bytes)}`, index + 1 === files.length);
  }
}
