/**
 * The hooks every internal HTTP route runs (core/cluster/internal-auth.ts): the headers are checked in
 * `onRequest`, before a byte of the body is read (signed for this node, in the time window, a fresh nonce), and
 * the body in `preParsing`: the raw bytes as they arrived are read, hashed and compared with the signed digest
 * before anything parses them, then handed on unchanged. So no handler ever sees a body other than the one
 * the sending node signed; the principal it carries is trusted for that reason alone.
 */
import { Readable } from 'node:stream';
import type { FastifyRequest, onRequestAsyncHookHandler, preParsingAsyncHookHandler } from 'fastify';
import { checkSignedBody, type InternalAuth, type VerifiedHeaders } from '../../core/cluster/internal-auth.ts';
import { AppError } from '../../core/errors.ts';

export interface SignedRequestHooks {
  onRequest: onRequestAsyncHookHandler;
  preParsing: preParsingAsyncHookHandler;
}

/** Reads a request body whole, refusing one longer than `limitBytes` (413) as Fastify's parser would. */
async function readBody(payload: AsyncIterable<Buffer | string>, limitBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of payload) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    length += bytes.length;
    if (length > limitBytes) throw new AppError('PAYLOAD_TOO_LARGE', `internal request body over ${limitBytes} bytes`);
    chunks.push(bytes);
  }
  return Buffer.concat(chunks, length);
}

/** The hooks of the internal routes, checking signatures with `auth`; bodies up to `bodyLimitBytes`. */
export function signedRequestHooks(auth: InternalAuth, bodyLimitBytes: number): SignedRequestHooks {
  const verified = new WeakMap<FastifyRequest, VerifiedHeaders>();
  return {
    onRequest: async (request) => {
      verified.set(request, auth.verifyHeaders(request.method, request.url, request.headers));
    },
    preParsing: async (request, _reply, payload) => {
      const headers = verified.get(request);
      if (!headers) throw new AppError('NOT_AUTHENTICATED', 'internal cluster requests must be signed by a node of the cluster');
      const declared = Number(request.headers['content-length']);
      if (declared > bodyLimitBytes) throw new AppError('PAYLOAD_TOO_LARGE', `internal request body over ${bodyLimitBytes} bytes`);
      const body = await readBody(payload, bodyLimitBytes);
      checkSignedBody(headers, body);
      const replay = Readable.from(body.length > 0 ? [body] : []) as Readable & { receivedEncodedLength?: number };
      replay.receivedEncodedLength = body.length;
      return replay;
    },
  };
}
