/** `POST /v1/python/run` and `POST /v1/python/reset`: translate JSON to {@link KernelPool} calls. */
import { AgentFailure } from '../http/agent-failure.ts';
import { replyJson } from '../http/reply.ts';
import { optionalBoolean, optionalInteger, optionalString, readJsonBody, requireString } from '../http/request-body.ts';
import type { RouteRequest } from '../http/router.ts';
import type { PythonResetResponse } from '../protocol/messages.ts';
import type { KernelPool } from './kernel-pool.ts';

const CONTEXT_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const MAX_TIMEOUT_MS = 24 * 3600 * 1000;

function requireContextId(body: Record<string, unknown>): string {
  const contextId = requireString(body, 'contextId');
  if (!CONTEXT_ID.test(contextId)) throw new AgentFailure('BAD_REQUEST', '"contextId" must be 1 to 128 characters of [A-Za-z0-9_.:-]');
  return contextId;
}

/** Builds the handler of `POST /v1/python/run`. */
export function createPythonRunRoute(kernels: KernelPool) {
  return async ({ stream }: RouteRequest): Promise<void> => {
    const body = await readJsonBody(stream);
    const code = requireString(body, 'code');
    const timeoutMs = optionalInteger(body, 'timeoutMs', 1, MAX_TIMEOUT_MS);
    if (optionalBoolean(body, 'spare') === true) {
      const warmed = await kernels.warmSpare(code, timeoutMs);
      if (!warmed) throw new AgentFailure('UNAVAILABLE', 'there is no spare Python interpreter to run in');
      replyJson(stream, 200, warmed);
      return;
    }
    const contextId = requireContextId(body);
    // A host that gives up (its own deadline, a disconnect) must not leave the context busy forever.
    const cancel = new AbortController();
    const onClose = (): void => cancel.abort();
    stream.once('close', onClose);
    // A host that gave up while the body was read (its stream already closed) would get no 'close' any more.
    if (stream.closed || stream.destroyed) cancel.abort();
    const cwd = optionalString(body, 'cwd');
    if (cwd !== undefined && !cwd.startsWith('/')) throw new AgentFailure('BAD_REQUEST', '"cwd" must be an absolute path');
    const result = await kernels.run(contextId, code, { timeoutMs, signal: cancel.signal, ...(cwd ? { cwd } : {}) });
    stream.off('close', onClose);
    replyJson(stream, 200, result);
  };
}

/** Builds the handler of `POST /v1/python/reset`. */
export function createPythonResetRoute(kernels: KernelPool) {
  return async ({ stream }: RouteRequest): Promise<void> => {
    const body = await readJsonBody(stream);
    const answer: PythonResetResponse = { existed: kernels.reset(requireContextId(body)) };
    replyJson(stream, 200, answer);
  };
}
