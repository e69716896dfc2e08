/** `GET /v1/files/stat?path=`: metadata of one path. */
import { replyJson } from '../http/reply.ts';
import type { RouteRequest } from '../http/router.ts';
import { statPath } from './file-stat.ts';
import { queryGuestPath } from './guest-path.ts';

/** Handler of `GET /v1/files/stat`. */
export async function statRoute({ stream, url }: RouteRequest): Promise<void> {
  replyJson(stream, 200, await statPath(queryGuestPath(url)));
}
