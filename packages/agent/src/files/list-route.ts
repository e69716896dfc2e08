/** `GET /v1/files/list?path=`: the entries of a directory, sorted by name. */
import { readdir } from 'node:fs/promises';
import { posix } from 'node:path';
import { replyJson } from '../http/reply.ts';
import type { RouteRequest } from '../http/router.ts';
import type { FileListResponse, FileStat } from '../protocol/messages.ts';
import { statPath } from './file-stat.ts';
import { queryGuestPath } from './guest-path.ts';

// Stat calls in flight at once: enough to overlap I/O, few enough not to flood the thread pool.
const STAT_CONCURRENCY = 16;

/** Handler of `GET /v1/files/list`. */
export async function listRoute({ stream, url }: RouteRequest): Promise<void> {
  const path = queryGuestPath(url);
  const names = (await readdir(path)).sort();
  const entries: Array<FileStat | null> = new Array(names.length).fill(null);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < names.length) {
      const index = next++;
      // An entry removed between readdir and lstat is simply left out.
      entries[index] = await statPath(posix.join(path, names[index] as string)).catch(() => null);
    }
  };
  await Promise.all(Array.from({ length: Math.min(STAT_CONCURRENCY, names.length) }, worker));
  const answer: FileListResponse = { path, entries: entries.filter((entry): entry is FileStat => entry !== null) };
  replyJson(stream, 200, answer);
}
