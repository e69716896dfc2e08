/** `POST /v1/files/mkdir`: create a directory (and its parents, by default). */
import { mkdir } from 'node:fs/promises';
import { replyJson } from '../http/reply.ts';
import { optionalBoolean, optionalInteger, readJsonBody } from '../http/request-body.ts';
import type { RouteRequest } from '../http/router.ts';
import type { MkdirResponse } from '../protocol/messages.ts';
import { parseGuestPath } from './guest-path.ts';

/** Handler of `POST /v1/files/mkdir`. */
export async function mkdirRoute({ stream }: RouteRequest): Promise<void> {
  const body = await readJsonBody(stream);
  const path = parseGuestPath(body.path);
  const parents = optionalBoolean(body, 'parents') ?? true;
  const mode = optionalInteger(body, 'mode', 0, 0o7777) ?? 0o755;
  await mkdir(path, { recursive: parents, mode });
  const answer: MkdirResponse = { path };
  replyJson(stream, 200, answer);
}
