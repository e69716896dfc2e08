/**
 * `POST /v1/snapshot/quiesce` and `/thaw`: the host is about to capture this guest while it runs (a live snapshot
 * or a pause). The only guest state QEMU refuses to migrate is a mounted 9p share, so quiescing means: let the
 * file transfers under way finish, unmount the share, hold new transfers back until the host thaws (or the hold
 * runs out, should the host never come back). Everything else (processes, terminals, interpreters) is captured
 * as it is.
 */
import { replyJson } from '../http/reply.ts';
import { optionalInteger, readJsonBody } from '../http/request-body.ts';
import type { RouteRequest } from '../http/router.ts';
import type { TransferShare } from '../files/transfer.ts';
import type { QuiesceResponse } from '../protocol/messages.ts';

const DEFAULT_WAIT_MS = 10_000;
const DEFAULT_HOLD_MS = 30_000;
const MAX_MS = 10 * 60_000;

/** Builds the handlers of the quiesce and thaw routes. */
export function createQuiesceRoutes(share: TransferShare) {
  async function quiesce({ stream }: RouteRequest): Promise<void> {
    const started = performance.now();
    const body = await readJsonBody(stream);
    const waitMs = optionalInteger(body, 'waitMs', 0, MAX_MS) ?? DEFAULT_WAIT_MS;
    const holdMs = optionalInteger(body, 'holdMs', 1, MAX_MS) ?? DEFAULT_HOLD_MS;
    const { unmounted, waitedMs } = await share.quiesce(waitMs, holdMs);
    const answer: QuiesceResponse = { unmounted, waitedMs, durationMs: performance.now() - started };
    replyJson(stream, 200, answer);
  }

  function thaw({ stream }: RouteRequest): void {
    share.thaw();
    replyJson(stream, 200, { thawed: true });
  }

  return { quiesce, thaw };
}
