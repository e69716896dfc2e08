/**
 * Forwards one HTTP request to the app in the VM over a tunnel, streaming the body both ways. Node's HTTP
 * client speaks HTTP/1.1 over the tunnel's Duplex (`createConnection`), one tunnel per request, so nothing
 * about the app's protocol handling is re-implemented here.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.ts';
import { hopByHopNames } from './preview-request.ts';

/** Sends `request` (body streamed from the client) to `path` in the VM and answers with the app's response. */
export function forwardHttp(
  request: FastifyRequest,
  reply: FastifyReply,
  tunnel: Duplex,
  path: string,
  headers: [string, string][],
): Promise<FastifyReply> {
  return new Promise((resolve, reject) => {
    const upstream = httpRequest({
      method: request.method,
      path,
      // An array of pairs keeps repeated headers and the client's header case.
      headers: headers.flat(),
      createConnection: () => tunnel as Socket,
    });
    let answered = false;
    upstream.on('response', (response: IncomingMessage) => {
      answered = true;
      const drop = hopByHopNames(response.headers);
      reply.code(response.statusCode ?? 502);
      for (const [name, value] of Object.entries(response.headers)) {
        if (value !== undefined && !drop.has(name)) reply.header(name, value);
      }
      resolve(reply.send(response));
    });
    upstream.on('error', (error) => {
      if (answered) return; // the response stream errors too; Fastify ends the reply
      tunnel.destroy();
      reject(new AppError('APP_PORT_UNREACHABLE', `the app in the VM closed the connection without answering (${(error as NodeJS.ErrnoException).code ?? error.message})`));
    });
    // A client that goes away mid-request or mid-response ends the exchange with the app too.
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) upstream.destroy();
    });
    request.raw.pipe(upstream);
  });
}
