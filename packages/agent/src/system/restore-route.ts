/**
 * `POST /v1/restore`: fix-ups after a snapshot restore. Order matters: the kernel RNG is reseeded (with the
 * host's entropy, credited) before anything draws from it: a fresh `/etc/machine-id` and boot id (in the same
 * helper round trip as the clock and the hostname), the Python interpreters' `random` state, terminal ids. A
 * resume (`keepIdentity`) is the same VM coming back: it keeps its machine id and boot id.
 */
import { AgentFailure } from '../http/agent-failure.ts';
import { replyJson } from '../http/reply.ts';
import { optionalBoolean, readJsonBody, requireString } from '../http/request-body.ts';
import type { RouteRequest } from '../http/router.ts';
import { MAX_RESTORE_ENTROPY_BYTES, MIN_RESTORE_ENTROPY_BYTES, type RestoreResponse } from '../protocol/messages.ts';
import type { KernelPool } from '../python/kernel-pool.ts';
import type { AgentIdentity } from './identity.ts';
import type { PrivilegedHelper } from './privileged-helper.ts';

// RFC 1123 host name: labels of letters, digits and inner hyphens; at most 64 bytes (Linux limit).
const HOSTNAME = /^(?=.{1,64}$)[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/;
const VM_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/** What the restore route needs. */
export interface RestoreRouteDeps {
  helper: PrivilegedHelper;
  kernels: KernelPool;
  identity: AgentIdentity;
  /** A restore ends any capture the snapshot was taken in: transfers held back by its quiesce go on. */
  endCapture: () => void;
}

/** Builds the handler of `POST /v1/restore`. */
export function createRestoreRoute({ helper, kernels, identity, endCapture }: RestoreRouteDeps) {
  return async ({ stream }: RouteRequest): Promise<void> => {
    const started = performance.now();
    const body = await readJsonBody(stream);
    const wallClockMs = body.wallClockMs;
    if (typeof wallClockMs !== 'number' || !Number.isSafeInteger(wallClockMs) || wallClockMs <= 0) {
      throw new AgentFailure('BAD_REQUEST', '"wallClockMs" must be a positive integer (ms since the epoch)');
    }
    const entropy = requireString(body, 'entropy');
    const entropyBytes = Buffer.from(entropy, 'base64').length;
    if (entropyBytes < MIN_RESTORE_ENTROPY_BYTES || entropyBytes > MAX_RESTORE_ENTROPY_BYTES) {
      throw new AgentFailure('BAD_REQUEST', `"entropy" must carry ${MIN_RESTORE_ENTROPY_BYTES} to ${MAX_RESTORE_ENTROPY_BYTES} bytes (base64)`);
    }
    const hostname = requireString(body, 'hostname');
    if (!HOSTNAME.test(hostname)) throw new AgentFailure('BAD_REQUEST', `"hostname" ${JSON.stringify(hostname)} is not a valid host name`);
    const vmId = requireString(body, 'vmId');
    if (!VM_ID.test(vmId)) throw new AgentFailure('BAD_REQUEST', '"vmId" must be 1 to 128 characters of [A-Za-z0-9_.:-]');

    const keepIdentity = optionalBoolean(body, 'keepIdentity') ?? false;
    let applied: { applied: boolean; clockStepMs: number };
    try {
      applied = await helper.restore({ wallClockMs, entropy, hostname, newMachineId: !keepIdentity, newBootId: !keepIdentity });
    } catch (error) {
      throw new AgentFailure('SYSTEM_CHANGE_FAILED', `restore fix-ups failed: ${(error as Error).message}`);
    }
    identity.vmId = vmId;
    identity.markRestored();
    endCapture();
    const reseededKernels = kernels.reseedAll();
    const answer: RestoreResponse = {
      applied: applied.applied,
      clockStepMs: applied.clockStepMs,
      entropyBytes,
      hostname,
      vmId,
      reseededKernels,
      durationMs: performance.now() - started,
    };
    replyJson(stream, 200, answer);
  };
}
