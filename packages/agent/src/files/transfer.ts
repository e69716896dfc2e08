/**
 * The transfer share: large files cross between host and guest as chunk files in a virtio-9p share (the host's
 * per-VM transfer area), and only the control messages use the agent link. A virtio-serial port hands the guest
 * 4 KiB per read, which under TCG caps uploads near 5 MiB/s; 9p moves 512 KiB per request.
 *
 * The share is mounted on first use, not at boot: QEMU cannot save a snapshot while it is mounted, and a VM
 * that never moves a large file never pays for the mount.
 */
import { constants } from 'node:fs';
import type { Stats } from 'node:fs';
import { chmod, mkdir, open, readdir, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { posix } from 'node:path';
import { AgentFailure } from '../http/agent-failure.ts';
import { replyJson } from '../http/reply.ts';
import { optionalBoolean, optionalInteger, readJsonBody } from '../http/request-body.ts';
import type { RouteRequest } from '../http/router.ts';
import { readMounts } from '../system/mounts.ts';
import type { RemoveResponse, TransferInResponse, TransferOutResponse } from '../protocol/messages.ts';
import { TRANSFER_NAME_PATTERN } from '../protocol/routes.ts';
import { parseGuestPath } from './guest-path.ts';
import { refuseDirectoryTarget, targetError, uploadTemporary } from './upload-target.ts';

/** Where the agent mounts the share. */
export const TRANSFER_MOUNT_POINT = '/run/sandboxd-transfer';

/** Largest chunk the host may ask for: bounded by the host's area anyway; this keeps a bad request cheap. */
const MAX_CHUNK_BYTES = 64 * 1024 * 1024;
/** Copy buffer: 8 requests of 512 KiB over 9p per read, few system calls under TCG. */
const COPY_BUFFER_BYTES = 4 * 1024 * 1024;

/**
 * The share's directory in the guest, mounted on first use (a failed mount is retried next time). Transfers use it
 * through `use`, so that a live capture can `quiesce` it: wait for the transfers under way, unmount it (QEMU does
 * not migrate a VM whose 9p share is mounted), and hold new ones back until `thaw`. A transfer of many chunks
 * may span a quiesce: each chunk is its own `use`, and the host's chunk files stay in its area meanwhile.
 */
export class TransferShare {
  private mounted: Promise<string> | undefined;
  private active = 0;
  private idle: (() => void)[] = [];
  /** Set while a capture holds transfers back; resolves when they may go on. */
  private gate: { released: Promise<void>; release: () => void; timer: NodeJS.Timeout } | undefined;

  constructor(
    private readonly mount: () => Promise<string>,
    /** Unmounts the share; undefined when it stands for a plain directory (tests on a host). */
    private readonly unmount?: () => Promise<void>,
  ) {}

  /** Runs `work` with the mounted share's directory; a quiesce waits for it to finish. */
  async use<T>(work: (dir: string) => Promise<T>): Promise<T> {
    while (this.gate) await this.gate.released;
    this.active += 1;
    try {
      return await work(await this.dir());
    } finally {
      this.active -= 1;
      if (this.active === 0) for (const wake of this.idle.splice(0)) wake();
    }
  }

  /**
   * Holds new transfers back (for at most `holdMs`, or until `thaw`), waits up to `waitMs` for those under way,
   * then unmounts the share. Rejects when transfers are still running after `waitMs` (the hold is lifted).
   */
  async quiesce(waitMs: number, holdMs: number): Promise<{ unmounted: boolean; waitedMs: number }> {
    this.thaw();
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const gate = { released, release, timer: setTimeout(() => this.thaw(), holdMs) };
    gate.timer.unref();
    this.gate = gate;
    const started = performance.now();
    if (this.active > 0) {
      const drained = new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), waitMs);
        this.idle.push(() => {
          clearTimeout(timer);
          resolve(true);
        });
      });
      if (!(await drained)) {
        this.thaw();
        throw new AgentFailure('UNAVAILABLE', `${this.active} file transfer(s) still running after ${waitMs} ms; retry the capture`);
      }
    }
    const waitedMs = performance.now() - started;
    const wasMounted =
      this.mounted !== undefined &&
      (await this.mounted.then(
        () => true,
        () => false,
      ));
    if (!wasMounted || !this.unmount) return { unmounted: false, waitedMs };
    this.mounted = undefined;
    await this.unmount();
    return { unmounted: true, waitedMs };
  }

  /** Lets held-back transfers go on. */
  thaw(): void {
    const gate = this.gate;
    if (!gate) return;
    this.gate = undefined;
    clearTimeout(gate.timer);
    gate.release();
  }

  private dir(): Promise<string> {
    if (!this.mounted) {
      const attempt = this.mount();
      this.mounted = attempt;
      attempt.catch(() => {
        if (this.mounted === attempt) this.mounted = undefined;
      });
    }
    return this.mounted;
  }
}

/** A chunk name or upload id from the host, validated (no path can be smuggled in). */
export function transferName(value: unknown, field: string): string {
  if (typeof value !== 'string' || !TRANSFER_NAME_PATTERN.test(value)) throw new AgentFailure('BAD_REQUEST', `${field} must be 32 lowercase hex digits`);
  return value;
}

/** What a non-regular file is, for messages. */
function describeFileType(stats: Stats): string {
  if (stats.isFIFO()) return 'a named pipe (FIFO)';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}

/** Refuses anything but a regular file: EISDIR for a directory, INVALID_PATH for the rest. */
function requireRegularFile(path: string, stats: Stats): void {
  if (stats.isDirectory()) throw new AgentFailure('EISDIR', `${path}: is a directory`, path);
  if (!stats.isFile()) throw new AgentFailure('INVALID_PATH', `${path} is ${describeFileType(stats)}: only regular files can be read`, path);
}

/**
 * Opens `path` for reading; it must be a regular file. Checked before opening: open(2) of a FIFO without a
 * writer, or of some devices, blocks until something happens at the other end, and it would block one of
 * libuv's few pool threads, which every file operation of the agent shares. The open itself is non-blocking
 * (no effect on a regular file's reads), so a file swapped for a FIFO in between cannot block it either.
 */
export async function openRegularFile(path: string): Promise<{ handle: FileHandle; stats: Stats }> {
  requireRegularFile(path, await stat(path));
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    const stats = await handle.stat();
    requireRegularFile(path, stats);
    return { handle, stats };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Copies `length` bytes (fewer at the source's end) from `source@from` to `target@to`; resolves the count. */
export async function copyRange(source: FileHandle, from: number, target: FileHandle, to: number, length: number): Promise<number> {
  const buffer = Buffer.allocUnsafe(Math.min(COPY_BUFFER_BYTES, Math.max(1, length)));
  let copied = 0;
  while (copied < length) {
    const { bytesRead } = await source.read(buffer, 0, Math.min(buffer.length, length - copied), from + copied);
    if (bytesRead === 0) break;
    let written = 0;
    while (written < bytesRead) written += (await target.write(buffer, written, bytesRead - written, to + copied + written)).bytesWritten;
    copied += bytesRead;
  }
  return copied;
}

/**
 * Opens a chunk the host wrote. A missing chunk is a fault of the transfer, not a user's path error: the answer
 * says what the share looked like, to tell a lost mount from a lost file.
 */
async function openChunk(chunkPath: string): Promise<FileHandle> {
  try {
    // Non-blocking: the guest can write into the share, and a FIFO there must not hold a pool thread.
    return await open(chunkPath, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const dir = posix.dirname(chunkPath);
    const name = posix.basename(chunkPath);
    const entries = await readdir(dir).catch((failure: NodeJS.ErrnoException) => [`(readdir: ${failure.code})`]);
    const mounted = (await readMounts()).some((mount) => mount.target === dir && mount.type === '9p');
    const listed = entries.includes(name) ? ', yet readdir lists it' : '';
    throw new AgentFailure(
      'TRANSFER_CHUNK_MISSING',
      `transfer chunk ${name} is missing from the share (9p mounted: ${mounted}; ${entries.length} entries${listed})`,
    );
  }
}

/** Builds the handlers of the transfer routes over `share`. */
export function createTransferRoutes(share: TransferShare) {
  /** `POST /v1/files/transfer/in`. */
  async function transferIn({ stream }: RouteRequest): Promise<void> {
    const body = await readJsonBody(stream);
    const path = parseGuestPath(body.path);
    if (path === '/') throw new AgentFailure('INVALID_PATH', 'cannot write to /', path);
    const id = transferName(body.id, 'id');
    const chunk = transferName(body.chunk, 'chunk');
    const offset = optionalInteger(body, 'offset', 0, Number.MAX_SAFE_INTEGER) ?? 0;
    const last = optionalBoolean(body, 'last') ?? false;
    const mode = optionalInteger(body, 'mode', 0, 0o7777) ?? 0o644;
    const parents = optionalBoolean(body, 'parents') ?? true;
    const temporary = uploadTemporary(path, id);
    await share.use((dir) => copyChunkIn(posix.join(dir, chunk)));
    async function copyChunkIn(chunkPath: string): Promise<void> {
      try {
        if (parents) await mkdir(posix.dirname(path), { recursive: true });
        await refuseDirectoryTarget(path);
        // No O_TRUNC: chunks of one upload may arrive in any order, each writing its own range.
        const target = await open(temporary, constants.O_WRONLY | constants.O_CREAT, mode);
        let bytes: number;
        try {
          const source = await openChunk(chunkPath);
          try {
            bytes = await copyRange(source, 0, target, offset, Number.MAX_SAFE_INTEGER);
          } finally {
            await source.close();
          }
        } finally {
          await target.close();
        }
        await unlink(chunkPath);
        const answer: TransferInResponse = { path, bytes };
        if (last) {
          // The umask may have removed bits from the creation mode; the host asked for exactly this one.
          await chmod(temporary, mode);
          await rename(temporary, path);
          answer.size = (await stat(path)).size;
        }
        replyJson(stream, 200, answer);
      } catch (error) {
        await unlink(chunkPath).catch(() => undefined);
        await unlink(temporary).catch(() => undefined);
        throw targetError(error, temporary, path);
      }
    }
  }

  /** `POST /v1/files/transfer/abort`. */
  async function transferAbort({ stream }: RouteRequest): Promise<void> {
    const body = await readJsonBody(stream);
    const path = parseGuestPath(body.path);
    const temporary = uploadTemporary(path, transferName(body.id, 'id'));
    const removed = await unlink(temporary).then(
      () => true,
      () => false,
    );
    const answer: RemoveResponse = { removed };
    replyJson(stream, 200, answer);
  }

  /** `POST /v1/files/transfer/out`. */
  async function transferOut({ stream }: RouteRequest): Promise<void> {
    const body = await readJsonBody(stream);
    const path = parseGuestPath(body.path);
    const chunk = transferName(body.chunk, 'chunk');
    const offset = optionalInteger(body, 'offset', 0, Number.MAX_SAFE_INTEGER) ?? 0;
    const length = optionalInteger(body, 'length', 1, MAX_CHUNK_BYTES) ?? MAX_CHUNK_BYTES;
    const { handle, stats } = await openRegularFile(path);
    try {
      const answer = await exportChunk(share, handle, stats, chunk, offset, length);
      replyJson(stream, 200, answer);
    } finally {
      await handle.close();
    }
  }

  return { transferIn, transferAbort, transferOut };
}

/** Copies `[offset, offset + length)` of a file opened by `openRegularFile` into a new chunk file of the share. */
export function exportChunk(
  share: TransferShare,
  handle: FileHandle,
  stats: Stats,
  chunk: string,
  offset: number,
  length: number,
): Promise<TransferOutResponse> {
  return share.use((dir) => writeChunk(posix.join(dir, chunk), handle, stats, offset, length));
}

async function writeChunk(chunkPath: string, handle: FileHandle, stats: Stats, offset: number, length: number): Promise<TransferOutResponse> {
  // wx: never write through something already there under that name.
  const target = await open(chunkPath, 'wx', 0o600);
  try {
    const bytes = await copyRange(handle, offset, target, 0, Math.max(0, Math.min(length, stats.size - offset)));
    return { size: stats.size, mode: stats.mode & 0o7777, bytes };
  } catch (error) {
    await unlink(chunkPath).catch(() => undefined);
    throw error;
  } finally {
    await target.close();
  }
}
