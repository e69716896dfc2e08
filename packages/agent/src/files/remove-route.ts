/** `POST /v1/files/remove`: remove a file, symlink or directory (with contents only when `recursive`). */
import { lstat, rm, rmdir, unlink } from 'node:fs/promises';
import { replyJson } from '../http/reply.ts';
import { optionalBoolean, readJsonBody } from '../http/request-body.ts';
import type { RouteRequest } from '../http/router.ts';
import type { RemoveResponse } from '../protocol/messages.ts';
import { AgentFailure } from '../http/agent-failure.ts';
import { parseGuestPath } from './guest-path.ts';

/** Handler of `POST /v1/files/remove`. */
export async function removeRoute({ stream }: RouteRequest): Promise<void> {
  const body = await readJsonBody(stream);
  const path = parseGuestPath(body.path);
  if (path === '/') throw new AgentFailure('INVALID_PATH', 'refusing to remove /', path);
  const recursive = optionalBoolean(body, 'recursive') ?? false;
  const stats = await lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (stats) {
    // lstat, so a symlink to a directory is removed as a link and its target is left alone.
    if (!stats.isDirectory()) await unlink(path);
    else if (recursive) await rm(path, { recursive: true, force: true });
    else await rmdir(path);
  }
  const answer: RemoveResponse = { removed: stats !== null };
  replyJson(stream, 200, answer);
}
