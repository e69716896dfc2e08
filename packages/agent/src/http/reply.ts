/** Answer helpers for HTTP/2 streams (the core stream API, no compatibility layer). */
import type { ServerHttp2Stream } from 'node:http2';
import { HEADER_ERROR_CODE } from '../protocol/routes.ts';
import { toErrorAnswer } from './agent-failure.ts';

/**
 * Answers with a JSON body; does nothing if the host already reset the stream, or if it was answered already
 * (the router's deadline answered while the handler was stuck).
 */
export function replyJson(stream: ServerHttp2Stream, status: number, body: unknown): void {
  if (stream.destroyed || stream.closed || stream.headersSent) return;
  const payload = Buffer.from(JSON.stringify(body));
  stream.respond({ ':status': status, 'content-type': 'application/json', 'content-length': payload.length });
  stream.end(payload);
}

/**
 * Answers with the error body for `error`. When the headers went out already (a streamed answer), the
 * stream is reset instead: the host then sees a failed transfer, never a short one that looks complete.
 */
export function replyError(stream: ServerHttp2Stream, error: unknown): void {
  if (stream.destroyed || stream.closed) return;
  if (stream.headersSent) {
    stream.close(2 /* NGHTTP2_INTERNAL_ERROR */);
    return;
  }
  const { status, body } = toErrorAnswer(error);
  const payload = Buffer.from(JSON.stringify(body));
  stream.respond({ ':status': status, 'content-type': 'application/json', 'content-length': payload.length, [HEADER_ERROR_CODE]: body.code });
  stream.end(payload);
}
