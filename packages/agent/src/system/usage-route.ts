/** `GET /v1/usage`: guest CPU, memory and uptime from /proc. */
import { replyJson } from '../http/reply.ts';
import type { RouteRequest } from '../http/router.ts';
import { readUsage } from './proc-stats.ts';

/** Handler of `GET /v1/usage`. */
export async function usageRoute({ stream }: RouteRequest): Promise<void> {
  replyJson(stream, 200, await readUsage());
}
