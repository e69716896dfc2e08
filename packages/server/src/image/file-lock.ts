import { open } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { ImageBuildError } from './errors.ts';

/** A held exclusive lock; released by `release()` or, if the process dies, by the kernel. */
export interface FileLock {
  release(): Promise<void>;
}

/** Options of `acquireFileLock`. */
export interface AcquireFileLockOptions {
  /** Called once if the lock is busy, before waiting for it. */
  onWait?: () => void;
  /** Give up after this long (default: wait forever). */
  timeoutMs?: number;
}

/**
 * Takes an exclusive `flock(2)` lock on `path` (created if missing).
 *
 * Node has no flock binding, so util-linux's `flock` takes the lock on a file descriptor it inherits from us
 * (fd 3). flock locks belong to the open file description, which that fd shares with ours, so the lock stays
 * held after `flock` exits, until we close our fd. Unlike a lock directory this can never go stale: the
 * kernel drops the lock when the holder dies, however it dies. Node opens files with O_CLOEXEC, so other
 * children (mmdebstrap, ...) never inherit, and so never prolong, the lock.
 */
export async function acquireFileLock(path: string, options: AcquireFileLockOptions = {}): Promise<FileLock> {
  const handle = await open(path, 'a', 0o644);
  try {
    if ((await runFlock(handle.fd, ['--nonblock'])) !== 0) {
      options.onWait?.();
      const wait = options.timeoutMs === undefined ? [] : ['--timeout', String(Math.max(options.timeoutMs / 1000, 0.001))];
      if ((await runFlock(handle.fd, wait)) !== 0) {
        throw new ImageBuildError('IMAGE_LOCK_TIMEOUT', `timed out after ${options.timeoutMs} ms waiting for the build lock ${path}`);
      }
    }
  } catch (error) {
    await handle.close();
    throw error;
  }
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      await handle.close();
    },
  };
}

/** Runs `flock --exclusive [extra] 3` on the inherited fd; resolves with its exit status (1 = busy/timeout). */
async function runFlock(fd: number, extra: string[]): Promise<number> {
  const child = spawn('flock', ['--exclusive', ...extra, '3'], { stdio: ['ignore', 'ignore', 'pipe', fd] });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') throw new ImageBuildError('IMAGE_TOOL_MISSING', 'flock is not installed (apt-get install util-linux)', { cause: error });
    throw error;
  });
  if (code === 0 || code === 1) return code;
  throw new ImageBuildError('IMAGE_COMMAND_FAILED', `flock failed with status ${code}: ${stderr.trim()}`);
}
