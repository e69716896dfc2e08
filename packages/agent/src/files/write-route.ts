/**
 * `PUT /v1/files/content?path=&mode=&parents=`: stream the body into a file. The bytes go to a temporary file
 * next to the target, which is renamed over it at the end: an interrupted upload never leaves a half-written
 * file where the old one was. Nothing is held in memory beyond the stream's buffers.
 */
import { createWriteStream } from 'node:fs';
import { chmod, mkdir, rename, unlink } from 'node:fs/promises';
import { posix } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { replyJson } from '../http/reply.ts';
import type { RouteRequest } from '../http/router.ts';
import type { FileWriteResponse } from '../protocol/messages.ts';
import { AgentFailure } from '../http/agent-failure.ts';
import { parseMode, queryGuestPath } from './guest-path.ts';
import { refuseDirectoryTarget, targetError, uploadTemporary } from './upload-target.ts';

/** Write buffer size: large writes keep system calls (slow under TCG) few. */
const WRITE_BUFFER_BYTES = 256 * 1024;
let temporaryCounter = 0;

/** Handler of `PUT /v1/files/content`. */
export async function writeRoute({ stream, url }: RouteRequest): Promise<void> {
  const path = queryGuestPath(url);
  if (path === '/') throw new AgentFailure('INVALID_PATH', 'cannot write to /', path);
  const mode = parseMode(url.searchParams.get('mode'), 0o644);
  const parents = url.searchParams.get('parents') !== '0';
  if (parents) await mkdir(posix.dirname(path), { recursive: true });
  await refuseDirectoryTarget(path);
  // A counter, not randomness: names only need to be unique within this agent (see README on clones).
  const temporary = uploadTemporary(path, `${process.pid}-${++temporaryCounter}`);
  const file = createWriteStream(temporary, { mode, highWaterMark: WRITE_BUFFER_BYTES });
  try {
    await pipeline(stream, file);
    // The umask may have removed bits from the creation mode; the host asked for exactly this one.
    await chmod(temporary, mode);
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw targetError(error, temporary, path);
  }
  const answer: FileWriteResponse = { path, size: file.bytesWritten };
  replyJson(stream, 200, answer);
}
