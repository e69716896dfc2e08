/**
 * Carrying a snapshot directory to another host: what it holds and what it depends on outside itself (its disk
 * layer's backing file, named by path in the qcow2 header, and the kernel and initramfs its manifest names by
 * path), and, on the receiving side, the same directory re-pointed at that host's copies of those files and
 * sealed. The caller moves the bytes (the object store); this module only knows QEMU's files.
 */
import { chmod } from 'node:fs/promises';
import { runProgram } from '../../host/run-program.ts';
import type { SnapshotDependencies, SnapshotExport, SnapshotInfo } from '../vm-driver.ts';
import { VmError } from '../vm-errors.ts';
import { readSnapshotManifest, sealSnapshot, snapshotInfo, snapshotPaths, SNAPSHOT_FILES, type SnapshotManifest } from './snapshot-files.ts';

/** The files of a complete snapshot and its outside dependencies; undefined when `dir` holds none. */
export async function exportSnapshot(qemuImgBinary: string, dir: string): Promise<SnapshotExport | undefined> {
  const manifest = await readSnapshotManifest(dir);
  if (!manifest) return undefined;
  return {
    files: [SNAPSHOT_FILES.memory, SNAPSHOT_FILES.state, SNAPSHOT_FILES.overlay],
    manifest,
    dependencies: {
      diskBacking: await backingOf(qemuImgBinary, snapshotPaths(dir).overlayPath),
      kernel: manifest.machine.kernelPath,
      initrd: manifest.machine.initrdPath,
    },
  };
}

/**
 * Completes a snapshot whose files (`SnapshotExport.files`) were copied into `dir` from another host: its disk
 * layer is re-pointed at this host's copy of its backing file (the header only: the bytes are the same), its
 * manifest names this host's kernel and initramfs, and it is sealed like a snapshot saved here.
 */
export async function importSnapshot(qemuImgBinary: string, dir: string, manifest: unknown, dependencies: SnapshotDependencies): Promise<SnapshotInfo> {
  const given = manifest as SnapshotManifest;
  if (given?.version !== 1 || typeof given.machine !== 'object')
    throw new VmError('VM_INVALID_REQUEST', `not a snapshot manifest (version ${String(given?.version)})`);
  const overlayPath = snapshotPaths(dir).overlayPath;
  if (dependencies.diskBacking) await rebaseDiskLayer(qemuImgBinary, overlayPath, dependencies.diskBacking);
  const local: SnapshotManifest = { ...given, machine: { ...given.machine, kernelPath: dependencies.kernel, initrdPath: dependencies.initrd } };
  await sealSnapshot(dir, local);
  return snapshotInfo(dir, local);
}

/** Re-points a qcow2 layer at another copy of its backing file (`-u`: the header only; the bytes are the same). */
export async function rebaseDiskLayer(qemuImgBinary: string, layerPath: string, backing: { path: string; format: 'raw' | 'qcow2' }): Promise<void> {
  await chmod(layerPath, 0o644);
  await runProgram(qemuImgBinary, ['rebase', '-u', '-f', 'qcow2', '-F', backing.format, '-b', backing.path, layerPath]);
}

/** A qcow2 layer's backing file (absolute) and its format, or null for a layer without one. */
async function backingOf(qemuImgBinary: string, layerPath: string): Promise<SnapshotDependencies['diskBacking']> {
  // -U: the layer may be open in a running QEMU (a live snapshot's VM goes on over it).
  const { stdout } = await runProgram(qemuImgBinary, ['info', '-U', '--output=json', layerPath]);
  const info = JSON.parse(stdout) as { 'full-backing-filename'?: string; 'backing-filename'?: string; 'backing-filename-format'?: string };
  const backing = info['full-backing-filename'] ?? info['backing-filename'];
  if (!backing) return null;
  const format = info['backing-filename-format'];
  if (format !== 'raw' && format !== 'qcow2')
    throw new VmError('VM_OPERATION_FAILED', `${layerPath}: its backing file ${backing} has format ${String(format)}`);
  return { path: backing, format };
}
