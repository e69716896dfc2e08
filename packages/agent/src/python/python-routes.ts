/**
 * `POST /v1/python/run` and `POST /v1/python/reset`: translate JSON to {@link KernelPool} calls. A run asked with
 * `stream: true` (1.7) answers frames instead of JSON: its output as `Stdout`/`Stderr` frames while it runs, then an
 * `Exit` frame whose payload is the run's result (output included), or an `Error` frame.
 */
import { encodeFrame, encodeJsonFrame, FrameType } from '../protocol/frames.ts';
import { AgentFailure, toErrorAnswer } from '../http/agent-failure.ts';
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
    if (optionalBoolean(body, 'stream') !== true) {
      const result = await kernels.run(contextId, code, { timeoutMs, signal: cancel.signal, ...(cwd ? { cwd } : {}) });
      stream.off('close', onClose);
      replyJson(stream, 200, result);
      return;
    }
    stream.respond({ ':status': 200, 'content-type': 'application/vnd.sandboxd.frames' });
    // A host slower than the output only makes frames wait in the stream's buffer: the kernel's pipes are read
    // regardless (what the run keeps is bounded by MAX_RUN_OUTPUT_BYTES, and the result carries it whole).
    const send = (frame: Buffer): void => {
      if (!stream.destroyed && !stream.closed) stream.write(frame);
    };
    let end: Buffer;
    try {
      const result = await kernels.run(contextId, code, {
        timeoutMs,
        signal: cancel.signal,
        ...(cwd ? { cwd } : {}),
        onStdout: (bytes) => send(encodeFrame(FrameType.Stdout, bytes)),
        onStderr: (bytes) => send(encodeFrame(FrameType.Stderr, bytes)),
      });
      end = encodeJsonFrame(FrameType.Exit, result);
    } catch (error) {
      end = encodeJsonFrame(FrameType.Error, toErrorAnswer(error).body);
    }
    stream.off('close', onClose);
    if (!stream.destroyed && !stream.closed) stream.end(end);
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
