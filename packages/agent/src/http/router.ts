/**
 * Dispatches HTTP/2 streams to route handlers by method and path; `CONNECT` (no `:path`) goes to the tunnel
 * handler. A handler that throws gets an error answer (`reply.ts`), so handlers only describe the happy path.
 */
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import { AgentFailure } from './agent-failure.ts';
import { replyError } from './reply.ts';

/** What a handler gets for one request. */
export interface RouteRequest {
  stream: ServerHttp2Stream;
  headers: IncomingHttpHeaders;
  /** `:path` parsed; use `url.searchParams` for query parameters. */
  url: URL;
}

/** Handles one request; resolves when the answer is complete or handed to a stream. */
export type RouteHandler = (request: RouteRequest) => Promise<void> | void;

/** Method + path → handler table. */
export class Router {
  private readonly routes = new Map<string, RouteHandler>();
  private connectHandler: RouteHandler | undefined;

  /** Registers `handler` for `method path`. */
  add(method: 'GET' | 'POST' | 'PUT', path: string, handler: RouteHandler): this {
    this.routes.set(`${method} ${path}`, handler);
    return this;
  }

  /** Registers the handler of `CONNECT` requests (TCP tunnels). */
  connect(handler: RouteHandler): this {
    this.connectHandler = handler;
    return this;
  }

  /** Runs the handler for a stream; never throws. */
  async dispatch(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): Promise<void> {
    // A stream the host resets mid-answer errors; without a listener that would crash the agent.
    stream.on('error', () => undefined);
    const method = String(headers[':method'] ?? '');
    try {
      if (method === 'CONNECT') {
        if (!this.connectHandler) throw new AgentFailure('NOT_FOUND', 'tunnels are not served');
        await this.connectHandler({ stream, headers, url: new URL('http://agent/') });
        return;
      }
      const url = new URL(String(headers[':path'] ?? '/'), 'http://agent');
      const handler = this.routes.get(`${method} ${url.pathname}`);
      if (!handler) throw new AgentFailure('NOT_FOUND', `no route ${method} ${url.pathname}`);
      await handler({ stream, headers, url });
    } catch (error) {
      replyError(stream, error);
    }
  }
}
