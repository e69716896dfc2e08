/**
 * The layout of a VM's run directory and its state file. The state file is what survives a server crash:
 * with it the next server process finds the QEMU (pid + start time, so a reused pid is never mistaken for
 * it) and everything to remove when it is dead.
 */
import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { VmError } from '../vm-errors.ts';
import type { Accelerator, NetworkMode, VolumeAttachment } from '../vm-driver.ts';
import type { QemuMachine } from './command-line.ts';

/** File names inside a run directory. */
export const RUN_FILES = {
  state: 'vm.json',
  qmpSocket: 'qmp.sock',
  agentSocket: 'agent.sock',
  consoleLog: 'console.log',
  qemuLog: 'qemu.log',
  overlay: 'disk.qcow2',
  migrationSocket: 'migrate.sock',
  transfer: 'transfer',
} as const;

/** sun_path is 108 bytes including the terminating NUL. */
const MAX_SOCKET_PATH_BYTES = 107;

const VM_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** The paths of one run directory. */
export interface RunPaths {
  runDir: string;
  statePath: string;
  qmpSocketPath: string;
  agentSocketPath: string;
  consoleLogPath: string;
  qemuLogPath: string;
  overlayPath: string;
  migrationSocketPath: string;
  /** The transfer area (transfer-area.ts). */
  transferDir: string;
}

/** What the state file records. Version it: a newer server must still read an older server's files. */
export interface VmStateFile {
  version: 1;
  vmId: string;
  pid: number;
  /** Field 22 of /proc/<pid>/stat (clock ticks since boot) and the kernel boot id: together unique. */
  startTimeTicks: number;
  bootId: string;
  startedAtMs: number;
  accelerator: Accelerator;
  vcpuCount: number;
  memoryMb: number;
  network: NetworkMode;
  /** Set for snapshot sources: the directory their RAM file (and later the snapshot) lives in. */
  snapshotDir: string | null;
  /** Per-controller cgroup directories to remove when the VM is gone. */
  cgroupPaths: string[];
  /**
   * What a re-adopted VM needs to be captured (written by servers that can capture; absent in older files): the
   * machine, the disk layer QEMU writes now, and whether the transfer share is exported writable.
   */
  machine?: QemuMachine;
  overlayPath?: string;
  transferWritable?: boolean;
  /** The volumes in its slots (absent in older files: none). A re-adopted VM's capture needs them. */
  volumes?: VolumeAttachment[];
}

/** Throws unless `vmId` is safe in argv, paths and cgroup names. */
export function assertValidVmId(vmId: string): void {
  if (!VM_ID_PATTERN.test(vmId)) throw new VmError('VM_INVALID_REQUEST', `VM id must match ${VM_ID_PATTERN}, got ${JSON.stringify(vmId)}`);
}

/** The paths of `runDir`; throws when its socket paths would be too long for a unix socket. */
export function runPaths(runDir: string): RunPaths {
  const paths: RunPaths = {
    runDir,
    statePath: join(runDir, RUN_FILES.state),
    qmpSocketPath: join(runDir, RUN_FILES.qmpSocket),
    agentSocketPath: join(runDir, RUN_FILES.agentSocket),
    consoleLogPath: join(runDir, RUN_FILES.consoleLog),
    qemuLogPath: join(runDir, RUN_FILES.qemuLog),
    overlayPath: join(runDir, RUN_FILES.overlay),
    migrationSocketPath: join(runDir, RUN_FILES.migrationSocket),
    transferDir: join(runDir, RUN_FILES.transfer),
  };
  for (const socket of [paths.qmpSocketPath, paths.agentSocketPath, paths.migrationSocketPath]) {
    if (Buffer.byteLength(socket) > MAX_SOCKET_PATH_BYTES) {
      throw new VmError(
        'VM_INVALID_REQUEST',
        `run directory path too long for unix sockets (${socket} exceeds ${MAX_SOCKET_PATH_BYTES} bytes): use a shorter run root`,
      );
    }
  }
  return paths;
}

/**
 * Creates the run directory (its parents as needed); fails if it already holds a VM's state file. With a VM
 * user, the directory is `root:<vm group> 0710`: QEMU, after dropping privileges, must reach its overlay (it
 * reopens it by path when a restored VM starts) and the migration socket in here, and nothing else; every
 * ancestor must let it through too, which is checked here rather than failing obscurely later.
 */
export async function createRunDir(paths: RunPaths, vmUser: { name: string; uid: number; gid: number } | null): Promise<void> {
  await mkdir(dirname(paths.runDir), { recursive: true });
  if (vmUser) await assertTraversable(dirname(paths.runDir), vmUser);
  await mkdir(paths.runDir, { recursive: true, mode: 0o750 });
  const existing = await readStateFile(paths.statePath);
  if (existing) throw new VmError('VM_INVALID_REQUEST', `run directory ${paths.runDir} already belongs to VM ${existing.vmId}`);
  if (!vmUser) return;
  await chown(paths.runDir, 0, vmUser.gid);
  await chmod(paths.runDir, 0o710);
}

/** Throws unless `dir` and all its ancestors let `user` through (search permission). */
async function assertTraversable(dir: string, user: { name: string; uid: number; gid: number }): Promise<void> {
  for (let current = dir; ; current = dirname(current)) {
    const { mode, uid, gid } = await stat(current);
    const passes = (mode & 0o001) !== 0 || (gid === user.gid && (mode & 0o010) !== 0) || (uid === user.uid && (mode & 0o100) !== 0);
    if (!passes) {
      throw new VmError(
        'VM_HOST_UNSUPPORTED',
        `QEMU runs as ${user.name} and must reach its run directory under ${dir}, but ${current} (mode ${(mode & 0o777).toString(8)}) does not let it through: put run directories under a directory others may traverse (chmod o+x ${current}, or use e.g. /var/lib/sandboxd/run)`,
      );
    }
    if (current === dirname(current)) return;
  }
}

/** Writes the state file atomically (a crash leaves the old or the new one, never half of one). */
export async function writeStateFile(path: string, state: VmStateFile): Promise<void> {
  const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o640 });
  await rename(tmp, path);
}

/** Reads a state file; undefined when missing or unreadable (a VM that never got past spawning). */
export async function readStateFile(path: string): Promise<VmStateFile | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const state = JSON.parse(text) as VmStateFile;
    return state.version === 1 && typeof state.pid === 'number' ? state : undefined;
  } catch {
    return undefined;
  }
}
