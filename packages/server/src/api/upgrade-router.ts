/**
 * HTTP upgrades (WebSockets) bypass Fastify's routing: Node emits them as the server's `upgrade` event. This
 * router sends each to the first handler that claims it (the preview proxy forwards the raw handshake to the
 * VM; terminals accept it with `ws`), answers errors as plain HTTP responses with the API's error body, and
 * hands every other upgrade request back to Fastify as an ordinary request (so, e.g., a WebSocket to an
 * unknown path gets the usual 404).
 * @fastify/websocket is not used: it owns the `upgrade` event and terminates every WebSocket itself, while
 * the preview proxy must pass the app's handshake through untouched.
 */
import { randomBytes } from 'node:crypto';
import { ServerResponse, STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { AppError } from '../core/errors.ts';
import { redactUrl } from './request-logging.ts';
import type { App } from './types.ts';

/** Handles the upgrades it claims. `claim` returns null for requests that are not its own. */
export interface UpgradeHandler<T> {
  claim(request: IncomingMessage): T | null;
  /** Completes the handshake (or throws before writing anything to the socket). */
  handle(request: IncomingMessage, socket: Duplex, head: Buffer, claim: T, log: FastifyBaseLogger): Promise<void>;
}

/** Writes an error answer on a socket whose handshake failed, then closes it. */
export function refuseUpgrade(socket: Duplex, error: unknown, log: FastifyBaseLogger): number {
  const known = error instanceof AppError;
  if (!known) log.error({ err: error }, 'upgrade failed');
  const status = known ? error.statusCode : 500;
  const body = JSON.stringify(
    known ? { detail: error.message, code: error.code } : { detail: 'Internal server error; the details are in the server log', code: 'INTERNAL_ERROR' },
  );
  const extra = known
    ? Object.entries(error.headers)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('')
    : '';
  if (socket.writable) {
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n${extra}\r\n${body}`,
    );
  }
  socket.destroy();
  return status;
}

export function registerUpgradeRouter(app: App, handlers: UpgradeHandler<unknown>[]): void {
  app.server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => undefined); // a client that vanishes mid-handshake must not crash the server
    for (const handler of handlers) {
      const claim = handler.claim(request);
      if (claim === null) continue;
      const log = app.log.child({ reqId: `req-${randomBytes(8).toString('hex')}` });
      const started = performance.now();
      const done = (statusCode: number): void =>
        log.info(
          {
            method: request.method,
            url: redactUrl(request.url ?? ''),
            statusCode,
            upgrade: true,
            responseTimeMs: Math.round((performance.now() - started) * 10) / 10,
          },
          'request',
        );
      handler.handle(request, socket, head, claim, log).then(
        () => done(101),
        (error: unknown) => done(refuseUpgrade(socket, error, log)),
      );
      return;
    }
    // Not a WebSocket sandboxd serves: answer it as an ordinary request.
    const response = new ServerResponse(request);
    response.assignSocket(socket as never);
    response.once('finish', () => socket.destroy());
    app.server.emit('request', request, response);
  });
}
