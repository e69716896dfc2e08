/**
 * `POST /v1/snapshot/prepare`: make the guest ready to be snapshotted, answer, then hand the link back to
 * "waiting for a host" (see `LinkServer.handover`) once the answer has left.
 */
import type { Http2Session } from 'node:http2';
import { replyJson } from '../http/reply.ts';
import type { RouteRequest } from '../http/router.ts';
import type { SnapshotPrepareResponse } from '../protocol/messages.ts';
import type { KernelPool } from '../python/kernel-pool.ts';
import type { PrivilegedHelper } from './privileged-helper.ts';

/** How long preparation waits for the helper and the spare interpreter to finish starting (TCG is slow). */
const READY_WAIT_MS = 30_000;

/** What snapshot preparation needs. */
export interface SnapshotPrepareDeps {
  helper: PrivilegedHelper;
  kernels: KernelPool;
  /** Ends the HTTP/2 session `session` runs on and waits for a new host on its link. */
  handover(session: Http2Session): void;
}

/** Builds the handler of `POST /v1/snapshot/prepare`. */
export function createSnapshotPrepareRoute({ helper, kernels, handover }: SnapshotPrepareDeps) {
  return async ({ stream }: RouteRequest): Promise<void> => {
    const started = performance.now();
    // Both must be running inside the snapshot: that is what makes restores and first runs fast.
    const [helperReady, spareKernelReady] = await Promise.all([helper.isReady(READY_WAIT_MS), kernels.spareReady(READY_WAIT_MS)]);
    const answer: SnapshotPrepareResponse = { helperReady, spareKernelReady, durationMs: performance.now() - started };
    const session = stream.session;
    // 'close' comes after the answer's last frame was handed to the link.
    stream.once('close', () => {
      if (session) handover(session);
    });
    replyJson(stream, 200, answer);
  };
}
