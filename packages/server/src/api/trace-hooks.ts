/**
 * One span per request of the public listener (`POST /v1/execute`: the method and the route's pattern, never the raw
 * URL), over `@opentelemetry/api` alone: started when the request arrives (continuing the caller's trace when it
 * sends a W3C `traceparent`), ended when the response is sent, with the status code; a 5xx sets its status to
 * error. The span is the active one while the handler runs, so the core's and the engine's spans nest under it.
 * app.ts registers this only when tracing is on (observability/tracing.ts).
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import { ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE, ATTR_URL_PATH } from '@opentelemetry/semantic-conventions';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** observability/spans.ts's TRACER_NAME, written again: the api floor may not import observability/ (eslint.config.js). */
const TRACER_NAME = 'sandboxd';

export function registerHttpTracing(app: FastifyInstance): void {
  const spans = new WeakMap<FastifyRequest, { span: Span; active: Context }>();
  app.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    const span = trace.getTracer(TRACER_NAME).startSpan(
      `${request.method} ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: { [ATTR_HTTP_REQUEST_METHOD]: request.method, [ATTR_HTTP_ROUTE]: route, [ATTR_URL_PATH]: request.url.split('?')[0] },
      },
      parent,
    );
    const active = trace.setSpan(parent, span);
    spans.set(request, { span, active });
    context.with(active, done);
  });
  // The body was read in the socket's context, not the request's: the handler (called from here on) gets it back.
  app.addHook('preHandler', (request, _reply, done) => {
    const traced = spans.get(request);
    if (traced) context.with(traced.active, done);
    else done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const traced = spans.get(request);
    if (traced) {
      traced.span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, reply.statusCode);
      if (reply.statusCode >= 500) traced.span.setStatus({ code: SpanStatusCode.ERROR });
      traced.span.end();
      spans.delete(request);
    }
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    const traced = spans.get(request);
    if (traced) {
      traced.span.setStatus({ code: SpanStatusCode.ERROR, message: 'the client closed the connection' });
      traced.span.end();
      spans.delete(request);
    }
    done();
  });
}
