/**
 * (1.8) The routes of kept execs (kept-execs.ts): `POST /v1/exec/attach`, a framed stream like exec's that
 * re-attaches a host to a kept process (replay from the host's offsets, live output, the exit; stdin and signals
 * back), and `GET /v1/exec/kept`, the list a host reads after it restarted to find its processes again.
 */
import { FrameType, readFrames } from '../protocol/frames.ts';
import type { ExecAttachRequest, KeptExecListResponse } from '../protocol/messages.ts';
import { AgentFailure } from '../http/agent-failure.ts';
import { replyJson } from '../http/reply.ts';
import { optionalInteger, parseJsonObject } from '../http/request-body.ts';
import type { RouteRequest } from '../http/router.ts';
import { serveAttachedStream } from './exec-route.ts';
import type { KeptExecs } from './kept-execs.ts';

/** Builds the handlers of `POST /v1/exec/attach` and `GET /v1/exec/kept`. */
export function createKeptExecRoutes(kept: KeptExecs) {
  return {
    attach: async ({ stream }: RouteRequest): Promise<void> => {
      const frames = readFrames(stream)[Symbol.asyncIterator]();
      const first = await frames.next();
      if (first.done || first.value.type !== FrameType.Request) throw new AgentFailure('BAD_REQUEST', 'an attach stream must start with a Request frame');
      const request = parseAttachRequest(first.value.payload);
      const exec = kept.get(request.pid);
      stream.respond({ ':status': 200, 'content-type': 'application/vnd.sandboxd.frames' });
      exec.attach(stream, request);
      serveAttachedStream(stream, frames, exec);
    },
    list: ({ stream }: RouteRequest): void => {
      const answer: KeptExecListResponse = { execs: kept.list() };
      replyJson(stream, 200, answer);
    },
  };
}

function parseAttachRequest(payload: Buffer): ExecAttachRequest {
  const body = parseJsonObject(payload);
  const pid = optionalInteger(body, 'pid', 1, 2 ** 31 - 1);
  if (pid === undefined) throw new AgentFailure('BAD_REQUEST', '"pid" is required');
  return {
    pid,
    stdoutOffset: optionalInteger(body, 'stdoutOffset', 0, Number.MAX_SAFE_INTEGER) ?? 0,
    stderrOffset: optionalInteger(body, 'stderrOffset', 0, Number.MAX_SAFE_INTEGER) ?? 0,
  };
}
