/**
 * `GET /v1/files/content?path=`: stream a file's bytes. `content-length` is the size at open time, so the host
 * can tell a complete transfer from a cut one; the mode travels in a header. With `transfer=<chunk>` a file
 * larger than `transferAbove` goes through the transfer share instead (see `transfer.ts`): its first chunk is
 * written there and the answer has no body.
 */
import { pipeline } from 'node:stream/promises';
import { AgentFailure } from '../http/agent-failure.ts';
import type { RouteRequest } from '../http/router.ts';
import { HEADER_FILE_MODE, HEADER_FILE_SIZE, HEADER_TRANSFER_BYTES } from '../protocol/routes.ts';
import { queryGuestPath } from './guest-path.ts';
import { exportChunk, openRegularFile, transferName, type TransferShare } from './transfer.ts';

/** Read chunk size: large reads keep system calls (slow under TCG) few. */
const READ_BUFFER_BYTES = 256 * 1024;

/** The transfer parameters of a read, or undefined when the host did not ask for the share. */
function transferRequest(url: URL): { chunk: string; length: number; above: number } | undefined {
  const chunk = url.searchParams.get('transfer');
  if (chunk === null) return undefined;
  const length = Number(url.searchParams.get('transferLength'));
  const above = Number(url.searchParams.get('transferAbove') ?? 0);
  if (!Number.isSafeInteger(length) || length < 1 || !Number.isSafeInteger(above) || above < 0)
    throw new AgentFailure('BAD_REQUEST', 'transferLength and transferAbove must be byte counts');
  return { chunk: transferName(chunk, 'transfer'), length, above };
}

/** Builds the handler of `GET /v1/files/content`. */
export function createReadRoute(share: TransferShare) {
  return (request: RouteRequest) => readRoute(request, share);
}

async function readRoute({ stream, url }: RouteRequest, share: TransferShare): Promise<void> {
  const path = queryGuestPath(url);
  const transfer = transferRequest(url);
  const { handle, stats } = await openRegularFile(path);
  let handedOver = false;
  try {
    if (transfer && stats.size > transfer.above) {
      const first = await exportChunk(share, handle, stats, transfer.chunk, 0, transfer.length);
      stream.respond(
        { ':status': 200, [HEADER_FILE_SIZE]: first.size, [HEADER_TRANSFER_BYTES]: first.bytes, [HEADER_FILE_MODE]: first.mode.toString(8) },
        { endStream: true },
      );
      return;
    }
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
