/**
 * Dispatches HTTP/2 streams to route handlers by method and path; `CONNECT` (no `:path`) goes to the tunnel
 * handler. A handler that throws gets an error answer (`reply.ts`), so handlers only describe the happy path.
 *
 * Every route declares how long it may take to start its answer. Past that the host gets `DEADLINE_EXCEEDED`
 * at once, even while the handler stays stuck (a file-system call blocked in the kernel holds one of libuv's
 * pool threads for as long as it likes; see `main.ts`): one stuck operation must not leave its caller, or the
 * VM's other operations, waiting for the host's own, much longer, deadlines.
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

/**
 * How long a route may take before its answer starts (headers sent), in ms; null for routes whose answer comes
 * only after work that has a deadline of its own or is bounded by the host (a Python run, a streamed upload).
 */
export type AnswerWithinMs = number | null;

interface Route {
  handler: RouteHandler;
  answerWithinMs: AnswerWithinMs;
}

/** Method + path → handler table. */
export class Router {
  private readonly routes = new Map<string, Route>();
  private connectRoute: Route | undefined;

  /** Registers `handler` for `method path`. */
  add(method: 'GET' | 'POST' | 'PUT', path: string, handler: RouteHandler, answerWithinMs: AnswerWithinMs): this {
    this.routes.set(`${method} ${path}`, { handler, answerWithinMs });
    return this;
  }

  /** Registers the handler of `CONNECT` requests (TCP tunnels). */
  connect(handler: RouteHandler, answerWithinMs: AnswerWithinMs): this {
    this.connectRoute = { handler, answerWithinMs };
    return this;
  }

  /** Runs the handler for a stream; never throws. */
  async dispatch(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): Promise<void> {
    // A stream the host resets mid-answer errors; without a listener that would crash the agent.
    stream.on('error', () => undefined);
    const method = String(headers[':method'] ?? '');
    let expired = false;
    let timer: NodeJS.Timeout | undefined;
    try {
      const url = method === 'CONNECT' ? new URL('http://agent/') : new URL(String(headers[':path'] ?? '/'), 'http://agent');
      const route = method === 'CONNECT' ? this.connectRoute : this.routes.get(`${method} ${url.pathname}`);
      const name = method === 'CONNECT' ? `CONNECT ${String(headers[':authority'] ?? '')}` : `${method} ${url.pathname}`;
      if (!route) throw new AgentFailure('NOT_FOUND', method === 'CONNECT' ? 'tunnels are not served' : `no route ${name}`);
      const limitMs = route.answerWithinMs;
      if (limitMs !== null) {
        timer = setTimeout(() => {
          if (stream.headersSent || stream.destroyed || stream.closed) return;
          expired = true;
          replyError(
            stream,
            new AgentFailure('DEADLINE_EXCEEDED', `${name} did not answer within ${limitMs / 1000} s in the guest (a file system that does not answer?)`),
          );
        }, limitMs);
      }
      await route.handler({ stream, headers, url });
    } catch (error) {
      // After a deadline answer the stream is the host's again: a late failure has nobody to go to.
      if (!expired) replyError(stream, error);
    } finally {
      clearTimeout(timer);
    }
  }
}
