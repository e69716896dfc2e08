/**
 * Where an upload goes: a temporary file next to the target (so the final rename stays on one file system), and
 * errors that name the target, never the temporary file (a name of the agent's the user never chose).
 */
import { lstat } from 'node:fs/promises';
import { posix } from 'node:path';
import { AgentFailure } from '../http/agent-failure.ts';

/** The temporary file of upload `id` (a counter or the host's upload id) of `path`. */
export function uploadTemporary(path: string, id: string): string {
  return posix.join(posix.dirname(path), `.${posix.basename(path)}.sandboxd-upload-${id}`);
}

/** The failure for an upload whose target is a directory. */
function directoryTarget(path: string): AgentFailure {
  return new AgentFailure('EISDIR', `${path} is a directory`, path);
}

/** Refuses a target that is a directory before any byte is written (rename would fail only at the end). */
export async function refuseDirectoryTarget(path: string): Promise<void> {
  const stats = await lstat(path).catch(() => null);
  if (stats?.isDirectory()) throw directoryTarget(path);
}

/** `error` of an operation on `temporary`, told about `path` instead. */
export function targetError(error: unknown, temporary: string, path: string): unknown {
  const errno = error as NodeJS.ErrnoException | null;
  if (errno?.code === 'EISDIR') return directoryTarget(path);
  if (errno && typeof errno === 'object' && errno.path === temporary) errno.path = path;
  return error;
}
