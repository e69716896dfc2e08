/**
 * What a backup holds, and where each part lives on this node. In: what cannot be rebuilt. Out: what the server
 * rebuilds or what is only meaningful while it runs. docs/backup-and-upgrade.md says the same to operators; keep
 * the two in step.
 *
 * In the archive:
 *   data/sandboxd.db     the SQLite store (users, keys, sessions, webhooks, templates' rows…), copied online
 *   data/<DATA_FILES>    the vault key, the cluster settings, the admin key and token, the SSH host key
 *   objects/             the local object store (screenshots, recordings…), without its `tmp/` of partial writes
 *   volumes/             users' persistent volumes (`<vm snapshot dir>/volumes/*.img`)
 */
import path from 'node:path';
import type { Config } from '../../config/index.ts';
import type { ArchiveFolder } from './manifest.ts';

/** The store's file in the data directory. */
export const STORE_FILE = 'sandboxd.db';

/** Files of the data directory a backup takes besides the store (each when present), with why. */
export const DATA_FILES: readonly { name: string; why: string }[] = [
  { name: 'vault.key', why: 'seals vault secrets and the vault CA key: without it they never open again' },
  { name: 'cluster.json', why: 'the settings `sandboxd node join` wrote' },
  { name: 'admin-api-key', why: 'the admin key printed at the first start (the store keeps only its hash)' },
  { name: 'admin-token', why: 'the admin listener’s bearer token (scrapers and scripts hold it)' },
  { name: 'ssh-host-key', why: 'the SSH gateway’s host key (clients pinned it in known_hosts)' },
];

/** Left out on purpose, with why (recorded in each manifest). */
export const EXCLUDED: readonly { what: string; why: string }[] = [
  { what: '<data dir>/vms/', why: 'state of the VMs running when the backup was taken: they do not survive a restore' },
  { what: '<data dir>/sandboxd.db-wal, -shm', why: 'the online copy of the store already holds what they held' },
  { what: 'SANDBOXD_CACHE_DIR, SANDBOXD_SNAPSHOT_DIR', why: 'guest images and their boot snapshots: rebuilt from their content hash' },
  { what: 'SANDBOXD_RUN_DIR', why: 'per-VM run directories (sockets, overlays, console logs) of running VMs' },
  {
    what: '<vm snapshot dir>/snapshots, paused, templates',
    why: 'memory and disk images (GiBs each) of user snapshots, paused VMs and built templates, bound to the guest image they were made from; copy them with the server stopped if you need them (docs/backup-and-upgrade.md)',
  },
];

/** Where each archive folder lives on this node (null: not on this node's disk). */
export interface BackupPlaces {
  dataDir: string;
  /** The local object store; null with an S3 store (back the bucket up with the store's own tools). */
  objectsDir: string | null;
  volumesDir: string;
}

export function backupPlaces(config: Config): BackupPlaces {
  return {
    dataDir: config.server.dataDir,
    objectsDir: config.objects.objectStore === 'local' ? config.objects.objectStoreDir : null,
    volumesDir: path.join(config.vm.vmSnapshotDir, 'volumes'),
  };
}

/** The directory on this node an archive folder belongs in. */
export function placeOf(places: BackupPlaces, folder: ArchiveFolder): string | null {
  return folder === 'data' ? places.dataDir : folder === 'objects' ? places.objectsDir : places.volumesDir;
}

/** True when `child` is `parent` or inside it. */
export function isInside(parent: string, child: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}
