/**
 * `GET /v1/files/content?path=`: stream a file's bytes. `content-length` is the size at open time, so the host
 * can tell a complete transfer from a cut one; the mode travels in a header.
 */
import { open } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { AgentFailure } from '../http/agent-failure.ts';
import type { RouteRequest } from '../http/router.ts';
import { HEADER_FILE_MODE } from '../protocol/routes.ts';
import { queryGuestPath } from './guest-path.ts';

/** Read chunk size: large reads keep system calls (slow under TCG) few. */
const READ_BUFFER_BYTES = 256 * 1024;

/** Handler of `GET /v1/files/content`. */
export async function readRoute({ stream, url }: RouteRequest): Promise<void> {
  const path = queryGuestPath(url);
  const handle = await open(path, 'r');
  let handedOver = false;
  try {
    const stats = await handle.stat();
    if (stats.isDirectory()) throw new AgentFailure('EISDIR', `${path}: is a directory`, path);
    if (!stats.isFile()) throw new AgentFailure('INVALID_PATH', `${path}: not a regular file`, path);
    stream.respond({
      ':status': 200,
      'content-type': 'application/octet-stream',
      'content-length': stats.size,
      [HEADER_FILE_MODE]: (stats.mode & 0o7777).toString(8),
    });
    // `end` pins the length to the size announced in content-length even if the file grows meanwhile.
    const source = handle.createReadStream({ autoClose: false, highWaterMark: READ_BUFFER_BYTES, end: Math.max(0, stats.size - 1) });
    handedOver = true;
    try {
      if (stats.size === 0) {
        source.destroy();
        stream.end();
      } else {
        await pipeline(source, stream);
      }
    } finally {
      await handle.close();
    }
  } finally {
    if (!handedOver) await handle.close();
  }
}
