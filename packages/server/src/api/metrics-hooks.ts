/**
 * Feeds the public listener's requests and error responses to the metrics (observability/metrics.ts, wired by
 * app.ts): one observation per response, labelled by the route's pattern so that ids in URLs never become label
 * values, and one count per error response by its code (the `code` of the error body; `HTTP_<status>` for an
 * error without one, such as FastAPI's 422 validation body).
 */
import type { FastifyInstance } from 'fastify';

export interface HttpObserver {
  recordRequest(method: string, route: string, status: number, seconds: number): void;
  recordError(code: string, status: number): void;
}

/** What an error body's `code` is, if it has one. */
function errorCodeOf(payload: unknown): string | null {
  if (typeof payload !== 'string' || !payload.startsWith('{')) return null;
  try {
    const code = (JSON.parse(payload) as { code?: unknown }).code;
    return typeof code === 'string' && /^[A-Z][A-Z0-9_]{0,63}$/.test(code) ? code : null;
  } catch {
    return null;
  }
}

export function registerHttpMetrics(app: FastifyInstance, observer: HttpObserver): void {
  app.addHook('onSend', async (_request, reply, payload) => {
    if (reply.statusCode >= 400) observer.recordError(errorCodeOf(payload) ?? `HTTP_${reply.statusCode}`, reply.statusCode);
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    // An unmatched request (404) has no pattern: one label for all of them.
    observer.recordRequest(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
  });
}
