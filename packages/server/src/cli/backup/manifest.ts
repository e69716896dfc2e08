/**
 * The manifest of a `sandboxd backup` archive (`manifest.json`, the archive's first entry): what made it, the
 * store's schema, and every file with its size and SHA-256, which `sandboxd restore` checks before it touches
 * anything. Format versions: a restore reads its own and older ones, and refuses newer ones.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { migrationProvider } from '../../store/migrations/index.ts';
import { CliError } from '../context.ts';

export const MANIFEST_FILE = 'manifest.json';
export const BACKUP_FORMAT = 'sandboxd-backup';
export const BACKUP_FORMAT_VERSION = 1;

/** The archive's top folders and where each goes back (see layout.ts). */
export type ArchiveFolder = 'data' | 'objects' | 'volumes';
export const ARCHIVE_FOLDERS: readonly ArchiveFolder[] = ['data', 'objects', 'volumes'];

export interface ManifestFile {
  /** Path in the archive (`data/sandboxd.db`, `objects/…`, `volumes/vol_….img`). */
  path: string;
  size: number;
  sha256: string;
}

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  format_version: number;
  /** The sandboxd release that wrote it. */
  release: string;
  created_at: string;
  store: {
    kind: 'sqlite' | 'postgres';
    /** False with PostgreSQL: its database is backed up with pg_dump, not in this archive. */
    included: boolean;
    /** The migrations applied to the store when it was backed up (its schema version). */
    migrations: string[];
    latest_migration: string | null;
  };
  vault_key_included: boolean;
  files: ManifestFile[];
  /** What was deliberately left out, and why (for the operator reading the archive). */
  excluded: { what: string; why: string }[];
}

/** This release's version: the server package's (the same for `src/` under tsx and compiled `dist/`). */
export function releaseVersion(): string {
  const file = new URL('../../../package.json', import.meta.url);
  return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
}

/** The migrations this release knows (the names of its store's schema versions). */
export async function knownMigrations(): Promise<Set<string>> {
  return new Set(Object.keys(await migrationProvider('sqlite').getMigrations()));
}

/** The SHA-256 of a file, streamed. */
export async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Parses and checks a manifest read from an archive; refuses what this release cannot restore. */
export async function checkManifest(text: string): Promise<BackupManifest> {
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(text) as BackupManifest;
  } catch {
    throw new CliError(`${MANIFEST_FILE} is not JSON: this is not a sandboxd backup, or it is damaged`);
  }
  if (manifest?.format !== BACKUP_FORMAT || !Array.isArray(manifest.files) || !Array.isArray(manifest.store?.migrations))
    throw new CliError(`${MANIFEST_FILE} is not a sandboxd backup manifest`);
  if (!(manifest.format_version <= BACKUP_FORMAT_VERSION))
    throw new CliError(
      `the archive's format version ${manifest.format_version} is newer than this release's (${BACKUP_FORMAT_VERSION}): restore it with sandboxd ${manifest.release} or later`,
    );
  const known = await knownMigrations();
  const unknown = manifest.store.migrations.filter((name) => !known.has(name));
  if (unknown.length > 0)
    throw new CliError(
      `the archive's store has a newer schema than this release (${releaseVersion()}) knows (migration${unknown.length === 1 ? '' : 's'} ${unknown.join(', ')}, ` +
        `written by sandboxd ${manifest.release}): restore it with that release or a later one`,
    );
  return manifest;
}
