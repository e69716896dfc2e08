/**
 * A snapshot directory: guest RAM (`memory`, mapped copy-on-write by every restore), device state (`state`),
 * the frozen disk overlay (`disk.qcow2`, the backing file of every clone's overlay) and `snapshot.json`,
 * written last: a directory without it is an incomplete snapshot.
 */
import { randomBytes } from 'node:crypto';
import { chmod, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { NetworkMode, SnapshotInfo } from '../vm-driver.ts';
import type { QemuMachine } from './command-line.ts';

export const SNAPSHOT_FILES = {
  manifest: 'snapshot.json',
  memory: 'memory',
  state: 'state',
  overlay: 'disk.qcow2',
} as const;

/** `snapshot.json`. */
export interface SnapshotManifest {
  version: 1;
  /** The machine every restore must reproduce exactly. */
  machine: QemuMachine;
  /** QEMU's version: device state is only loaded by the QEMU that saved it. */
  qemuVersion: string;
  minMemoryMb: number;
  savedAtMs: number;
  stateBytes: number;
  /** The network backend in the device state (captures of running VMs); absent: saved without one. */
  network?: NetworkMode;
  /** Whether the 9p transfer share was exported writable (a capture's restores must export it the same way). */
  transferWritable?: boolean;
}

export function snapshotPaths(dir: string) {
  return {
    manifestPath: join(dir, SNAPSHOT_FILES.manifest),
    memoryPath: join(dir, SNAPSHOT_FILES.memory),
    statePath: join(dir, SNAPSHOT_FILES.state),
    overlayPath: join(dir, SNAPSHOT_FILES.overlay),
  };
}

/** The public view of a manifest. */
export function snapshotInfo(dir: string, manifest: SnapshotManifest): SnapshotInfo {
  return {
    dir,
    accelerator: manifest.machine.accelerator,
    network: manifest.network ?? null,
    vcpuCount: manifest.machine.vcpuCount,
    bootMemoryMb: manifest.machine.memoryMb,
    minMemoryMb: manifest.minMemoryMb,
    savedAtMs: manifest.savedAtMs,
    stateBytes: manifest.stateBytes,
  };
}

/** Reads `snapshot.json`; undefined when the snapshot is missing or incomplete. */
export async function readSnapshotManifest(dir: string): Promise<SnapshotManifest | undefined> {
  try {
    const manifest = JSON.parse(await readFile(snapshotPaths(dir).manifestPath, 'utf8')) as SnapshotManifest;
    return manifest.version === 1 ? manifest : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Makes the snapshot's files durable and read-only, then writes its manifest, which completes it: after a
 * host crash a manifest never describes RAM or disk bytes that did not reach the disk.
 */
export async function sealSnapshot(dir: string, manifest: SnapshotManifest): Promise<void> {
  const paths = snapshotPaths(dir);
  for (const path of [paths.memoryPath, paths.statePath, paths.overlayPath]) {
    const handle = await open(path, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    // Read-only as a reminder: every clone depends on these bytes never changing.
    await chmod(path, 0o444);
  }
  const tmp = `${paths.manifestPath}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o444 });
  await rename(tmp, paths.manifestPath);
}

/** Removes the files of a snapshot that was never completed (its source VM died or the save failed). */
export async function removeIncompleteSnapshot(dir: string): Promise<void> {
  if (await readSnapshotManifest(dir)) return;
  const paths = snapshotPaths(dir);
  await Promise.all([paths.memoryPath, paths.statePath, `${paths.statePath}.tmp`, paths.overlayPath].map((path) => rm(path, { force: true })));
}
