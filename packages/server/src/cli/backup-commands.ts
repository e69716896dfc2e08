/** `sandboxd backup` and `sandboxd restore` (the work is in backup/; this file is their command line). */
import type { Command } from 'commander';
import { loadConfig } from '../config/index.ts';
import { createBackup } from './backup/create-backup.ts';
import { formatBytes } from './backup/files.ts';
import { restoreBackup } from './backup/restore-backup.ts';
import { print, wantsJson } from './context.ts';

const SEE_DOCS = 'What is in a backup and what is not, PostgreSQL, and upgrades: docs/backup-and-upgrade.md.';

export function registerBackupCommands(program: Command): void {
  program
    .command('backup')
    .description('write a backup of this node’s deployment (safe while the server runs)')
    .option('-o, --output <file>', 'the archive to write (default: sandboxd-backup-<UTC timestamp>.tar.gz here)')
    .option('--without-vault-key', 'leave the vault key out of the archive (then keep it apart yourself: secrets never open without it)')
    .addHelpText(
      'after',
      '\nA gzip-compressed tar with a manifest.json (each file’s size and SHA-256): the SQLite store copied online,\n' +
        'the vault key and the other keys of the data directory, the local object store and the volumes. It holds\n' +
        'credentials: it is written readable by its owner only. With PostgreSQL (SANDBOXD_DATABASE_URL) it holds the\n' +
        `files only: back the database up with pg_dump. Progress goes to stderr. ${SEE_DOCS}`,
    )
    .action(async (options: { output?: string; withoutVaultKey?: boolean }, command: Command) => {
      const result = await createBackup(loadConfig(), options);
      const { manifest } = result;
      print(
        wantsJson(command),
        {
          file: result.file,
          bytes: result.bytes,
          files: manifest.files.length,
          release: manifest.release,
          store: manifest.store.kind,
          store_included: manifest.store.included,
          latest_migration: manifest.store.latest_migration,
          vault_key_included: manifest.vault_key_included,
          created_at: manifest.created_at,
        },
        `wrote ${result.file} (${formatBytes(result.bytes)}, ${manifest.files.length} files, schema ${manifest.store.latest_migration ?? 'empty'})` +
          (manifest.store.included ? '' : '\nthe PostgreSQL database is not in it: back it up with pg_dump (docs/backup-and-upgrade.md)'),
      );
    });

  program
    .command('restore')
    .description('restore a backup into this node’s data directory (the server must be stopped)')
    .argument('<file>', 'an archive written by sandboxd backup')
    .option('--force', 'replace the deployment in the data directory: it is moved aside to <data dir>.before-restore-<timestamp>, not deleted')
    .addHelpText(
      'after',
      '\nChecks every file’s SHA-256 before it touches anything, then moves the archive’s folders into place in one\n' +
        'step each. Refuses while a server runs on the data directory, when the data directory holds a store or a\n' +
        'vault key (unless --force), and an archive from a newer release’s schema. Start the server afterwards: it\n' +
        `brings the schema up to date. ${SEE_DOCS}`,
    )
    .action(async (file: string, options: { force?: boolean }, command: Command) => {
      const result = await restoreBackup(loadConfig(), file, options);
      const { manifest } = result;
      print(
        wantsJson(command),
        {
          files: result.files,
          bytes: result.bytes,
          release: manifest.release,
          created_at: manifest.created_at,
          latest_migration: manifest.store.latest_migration,
          moved_aside: result.movedAside,
          skipped: result.skipped,
        },
        [
          `restored ${result.files} files (${formatBytes(result.bytes)}) from a backup of ${manifest.created_at} (sandboxd ${manifest.release}, schema ${manifest.store.latest_migration ?? 'empty'})`,
          ...result.movedAside.map((aside) => `what was there before is in ${aside}`),
          ...result.skipped.map((what) => `not restored: ${what}`),
          ...(manifest.vault_key_included ? [] : ['the archive holds no vault key: put the deployment’s vault.key back, or set SANDBOXD_VAULT_KEY']),
          ...(manifest.store.included ? [] : ['the database is not in the archive: restore it with pg_restore (docs/backup-and-upgrade.md)']),
          'start the server: it brings the schema up to date',
        ].join('\n'),
      );
    });
}
