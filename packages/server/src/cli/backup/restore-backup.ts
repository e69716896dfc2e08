/**
 * `sandboxd restore FILE [--force]`: puts a backup back, all of it or nothing.
 *
 * Order: refuse while a server runs on this data directory (store-in-use.ts); refuse to replace a deployment
 * (a store or a vault key in the data directory) without --force; read the whole archive once, writing nothing
 * (a damaged gzip or tar, or an entry a backup never has — a link, a path outside its folders — fails here) and
 * check its manifest (format, and a schema this release knows); extract it into a new folder beside the data
 * directory and check every file against the manifest (no file missing or extra, each size and SHA-256); only
 * then swap: each place's current contents are moved aside to
 * `<place>.before-restore-<timestamp>` (never deleted) and the extracted folder is renamed into place. A failure
 * before the swap leaves the node as it was; one during it moves back what was moved.
 */
import fs from 'node:fs';
import path from 'node:path';
import { extract, list } from 'tar';
import type { Config } from '../../config/index.ts';
import { CliError } from '../context.ts';
import { fileTimestamp, formatBytes, hasEntries, listFiles, move, progressLines } from './files.ts';
import { backupPlaces, isInside, placeOf, STORE_FILE } from './layout.ts';
import { ARCHIVE_FOLDERS, checkManifest, MANIFEST_FILE, sha256Of, type BackupManifest } from './manifest.ts';
import { storeInUse } from './store-in-use.ts';

export interface RestoreOptions {
  /** Replace the deployment in the data directory (moved aside first). */
  force?: boolean;
}

export interface RestoreResult {
  manifest: BackupManifest;
  files: number;
  bytes: number;
  /** Where the contents that were there before now are. */
  movedAside: string[];
  /** Archive folders this node has no place for (objects with an S3 store). */
  skipped: string[];
}

export async function restoreBackup(config: Config, file: string, options: RestoreOptions): Promise<RestoreResult> {
  const archive = path.resolve(file);
  if (!fs.statSync(archive, { throwIfNoEntry: false })?.isFile()) throw new CliError(`${archive}: no such file`);
  const places = backupPlaces(config);
  const inUse = await storeInUse(config);
  if (inUse) throw new CliError(`refusing to restore: ${inUse}. Stop it first.`);
  const deployment = [STORE_FILE, 'vault.key'].filter((name) => fs.existsSync(path.join(places.dataDir, name)));
  const timestamp = fileTimestamp();
  if (deployment.length > 0 && !options.force)
    throw new CliError(
      `refusing to restore: ${places.dataDir} holds a deployment (${deployment.join(', ')}). ` +
        `Give --force to move it aside to ${places.dataDir}.before-restore-${timestamp} and restore in its place.`,
    );

  const progress = progressLines();
  // Read through once before anything is written: the archive is whole, and its manifest is one this release takes.
  const manifest = await checkManifest(await readArchive(archive, progress));
  checkStoreKind(manifest, config);
  await fs.promises.mkdir(path.dirname(places.dataDir), { recursive: true });
  const temp = `${places.dataDir}.restore-${timestamp}`;
  await fs.promises.mkdir(temp, { mode: 0o700 });
  try {
    await extractArchive(archive, temp, progress);
    // The manifest that was checked is the one the files are checked against (the extracted copy is ignored).
    const bytes = await verifyFiles(temp, manifest, progress);

    const { movedAside, skipped } = await swapIn(temp, places, timestamp);
    return { manifest, files: manifest.files.length, bytes, movedAside, skipped };
  } finally {
    // Retried: after a failed extraction a write may still land for a moment.
    await fs.promises.rm(temp, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }
}

/** The archive's store must be the kind this node is configured for. */
function checkStoreKind(manifest: BackupManifest, config: Config): void {
  if (manifest.store.kind === 'sqlite' && config.server.databaseUrl)
    throw new CliError('the archive holds an embedded SQLite store, but this node is configured for PostgreSQL (SANDBOXD_DATABASE_URL): unset it to restore');
  if (manifest.store.kind === 'postgres' && !config.server.databaseUrl)
    throw new CliError(
      'the archive was made on a PostgreSQL deployment and holds no database: set SANDBOXD_DATABASE_URL to the database you restored with pg_restore, then restore the files',
    );
}

/** Is an entry one a sandboxd backup has: a plain file or folder under the archive's own names? */
function isBackupEntry(entryPath: string, type: string): boolean {
  const top = entryPath.replace(/^\.\//, '').split('/')[0] ?? '';
  return (type === 'File' || type === 'Directory') && (top === MANIFEST_FILE || (ARCHIVE_FOLDERS as readonly string[]).includes(top));
}

/**
 * Reads the whole archive once without writing anything: a damaged or truncated gzip or tar fails here, as does
 * an entry a backup never has (a link, a device, a path outside its folders). Returns the manifest's text.
 */
async function readArchive(archive: string, progress: (line: string, force?: boolean) => void): Promise<string> {
  const refused: string[] = [];
  const manifest: Buffer[] = [];
  let entries = 0;
  let bytes = 0;
  try {
    await list({
      file: archive,
      strict: true,
      onReadEntry: (entry) => {
        if (!isBackupEntry(entry.path, entry.type)) refused.push(`${entry.path} (${entry.type})`);
        if (entry.path === MANIFEST_FILE) entry.on('data', (chunk: Buffer) => manifest.push(chunk));
        else entry.resume();
        entries++;
        bytes += entry.size ?? 0;
        progress(`reading: ${entries} entries, ${formatBytes(bytes)}`);
      },
    });
  } catch (error) {
    throw new CliError(`${archive} cannot be read as a sandboxd backup (gzip-compressed tar): ${(error as Error).message}`);
  }
  if (refused.length > 0) throw new CliError(`${archive} holds entries a sandboxd backup never has: ${refused.slice(0, 5).join(', ')}`);
  if (manifest.length === 0) throw new CliError(`${archive} has no ${MANIFEST_FILE}: it is not a sandboxd backup`);
  return Buffer.concat(manifest).toString('utf8');
}

/** Extracts the archive (read whole by readArchive already) into `into`; the same filter again, in case it changed. */
async function extractArchive(archive: string, into: string, progress: (line: string, force?: boolean) => void): Promise<void> {
  let entries = 0;
  let bytes = 0;
  try {
    await extract({
      file: archive,
      cwd: into,
      strict: true,
      filter: (entryPath, entry) => {
        const type = 'type' in entry ? entry.type : entry.isDirectory() ? 'Directory' : 'File';
        entries++;
        bytes += entry.size ?? 0;
        progress(`extracting: ${entries} entries, ${formatBytes(bytes)}`);
        if (!isBackupEntry(entryPath, type)) throw new CliError(`${archive} changed while it was restored: ${entryPath} (${type}) appeared`);
        return true;
      },
    });
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(`${archive} could not be extracted into ${into}: ${(error as Error).message}`);
  }
}

/** Every file against the manifest: the same set, each size and SHA-256. Returns the bytes checked. */
async function verifyFiles(temp: string, manifest: BackupManifest, progress: (line: string, force?: boolean) => void): Promise<number> {
  const present = new Set((await listFiles(temp, (relative) => relative === MANIFEST_FILE)).map((relative) => relative.split(path.sep).join('/')));
  const problems: string[] = [];
  let bytes = 0;
  for (const [index, entry] of manifest.files.entries()) {
    if (!present.delete(entry.path)) {
      problems.push(`${entry.path} is missing`);
      continue;
    }
    const file = path.join(temp, ...entry.path.split('/'));
    const size = (await fs.promises.stat(file)).size;
    if (size !== entry.size) problems.push(`${entry.path} has ${size} bytes, the manifest says ${entry.size}`);
    else if ((await sha256Of(file)) !== entry.sha256) problems.push(`${entry.path}: its SHA-256 differs from the manifest's`);
    bytes += size;
    progress(`checking: ${index + 1}/${manifest.files.length} files, ${formatBytes(bytes)}`, index + 1 === manifest.files.length);
  }
  for (const extra of present) problems.push(`${extra} is not in the manifest`);
  if (problems.length > 0)
    throw new CliError(
      `the archive is damaged, nothing was restored: ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? ` (and ${problems.length - 5} more)` : ''}`,
    );
  return bytes;
}

/**
 * Moves each place's current contents aside and the extracted folder in. The objects folder goes inside the
 * extracted data folder first when the object store lives in the data directory (the default), so one rename
 * brings both.
 */
async function swapIn(temp: string, places: ReturnType<typeof backupPlaces>, timestamp: string): Promise<{ movedAside: string[]; skipped: string[] }> {
  const staged = (folder: string) => path.join(temp, folder);
  await fs.promises.mkdir(staged('data'), { recursive: true, mode: 0o700 });
  const skipped: string[] = [];
  const moves: { folder: string; target: string }[] = [{ folder: 'data', target: places.dataDir }];
  if (places.objectsDir && isInside(places.dataDir, places.objectsDir)) {
    if (fs.existsSync(staged('objects'))) {
      const inData = path.join(staged('data'), path.relative(places.dataDir, places.objectsDir));
      await fs.promises.mkdir(path.dirname(inData), { recursive: true });
      await fs.promises.rename(staged('objects'), inData);
    }
  } else if (places.objectsDir) {
    moves.push({ folder: 'objects', target: places.objectsDir });
  } else if (fs.existsSync(staged('objects'))) {
    skipped.push('objects (this node keeps objects in S3: copy them from the archive into the bucket yourself)');
  }
  moves.push({ folder: 'volumes', target: placeOf(places, 'volumes')! });

  const done: (() => Promise<void>)[] = [];
  const movedAside: string[] = [];
  try {
    for (const { folder, target } of moves) {
      if (fs.existsSync(target)) {
        if (hasEntries(target)) {
          const aside = `${target}.before-restore-${timestamp}`;
          await move(target, aside);
          done.push(() => move(aside, target));
          movedAside.push(aside);
        } else {
          await fs.promises.rmdir(target);
        }
      }
      if (fs.existsSync(staged(folder))) {
        await fs.promises.mkdir(path.dirname(target), { recursive: true });
        await move(staged(folder), target);
        done.push(() => move(target, staged(folder)));
      }
    }
  } catch (error) {
    for (const undo of done.reverse()) await undo().catch(() => undefined);
    throw new CliError(`the restore failed while moving folders into place, and what it moved was moved back: ${(error as Error).message}`);
  }
  return { movedAside, skipped };
}
