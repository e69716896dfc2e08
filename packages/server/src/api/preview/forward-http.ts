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
import { allowedResponseHeader, type PreviewOrigin } from './response-headers.ts';

/**
 * The Content-Security-Policy that makes a page of a path-based preview run in an opaque origin: it is served on
 * the API's own origin, where the web console's session cookie lives, so without it any page of any VM (a
 * share link another user sends you, or a page an agent planted in your own VM) could read the console's CSRF
 * cookie and act as you. Scripts, forms, pop-ups and downloads still work; the page's own storage and
 * same-origin requests do not (use the app's `direct_url`, its own origin, for full apps).
 */
export const PATH_PREVIEW_SANDBOX =
  'sandbox allow-scripts allow-forms allow-popups allow-popups-to-escape-sandbox allow-modals allow-downloads allow-pointer-lock allow-presentation';

/**
 * Sends `request` (body streamed from the client) to `path` in the VM and answers with the app's response,
 * its headers filtered for the origin the preview is served on (response-headers.ts). On the shared origin
 * every answer carries {@link PATH_PREVIEW_SANDBOX} besides any policy the app sends (browsers enforce both),
 * with no exception: nothing a VM serves there runs with the console's origin.
 */
export function forwardHttp(
  request: FastifyRequest,
  reply: FastifyReply,
  tunnel: Duplex,
  path: string,
  headers: [string, string][],
  origin: PreviewOrigin,
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
        if (value === undefined || drop.has(name)) continue;
        const allowed = allowedResponseHeader(name, value, origin);
        if (allowed !== null) reply.header(name, allowed);
      }
      if (origin === 'shared') {
        const own = response.headers['content-security-policy'];
        reply.header('content-security-policy', own === undefined ? PATH_PREVIEW_SANDBOX : [...(Array.isArray(own) ? own : [own]), PATH_PREVIEW_SANDBOX]);
      }
      resolve(reply.send(response));
    });
    upstream.on('error', (error) => {
      if (answered) return; // the response stream errors too; Fastify ends the reply
      tunnel.destroy();
      reject(
        new AppError(
          'APP_PORT_UNREACHABLE',
          `the app in the VM closed the connection without answering (${(error as NodeJS.ErrnoException).code ?? error.message})`,
        ),
      );
    });
    // A client that goes away mid-request or mid-response ends the exchange with the app too.
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) upstream.destroy();
    });
    request.raw.pipe(upstream);
  });
}
