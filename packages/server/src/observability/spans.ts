/**
 * Spans in the server's own code, over `@opentelemetry/api` alone (the SDK is `tracing.ts`'s, wired by app.ts):
 * the core and the engine wrap a step in `inSpan`, which costs a no-op span when tracing is off. The tracer is looked
 * up at each call, not kept: the provider behind the API's global changes when an app turns tracing on or off.
 */
import { context, INVALID_SPAN_CONTEXT, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';

/** The instrumentation scope of every span the server makes. */
export const TRACER_NAME = 'sandboxd';

export interface SpanOptions {
  attributes?: Attributes;
  /**
   * Only as part of a trace already under way (a request's): no span at all otherwise. For steps that also run in
   * the background (the warm pool's agent calls), which would each start a trace of one span.
   */
  childOnly?: boolean;
}

/**
 * Runs `work` inside a span named `name` (the active span while it runs, so what it awaits nests under it), ended
 * when `work` settles; a rejection records the exception and sets the span's status to error.
 */
export async function inSpan<T>(name: string, options: SpanOptions, work: (span: Span) => Promise<T>): Promise<T> {
  if (options.childOnly && !trace.getActiveSpan()) return work(trace.wrapSpanContext(INVALID_SPAN_CONTEXT));
  return trace.getTracer(TRACER_NAME).startActiveSpan(name, { attributes: options.attributes ?? {} }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * Starts a span that outlives the call that starts it (a run that goes on after its request answered): `within`
 * runs with it active, and the caller ends it with `end`.
 */
export function startSpan(name: string, attributes: Attributes = {}): { span: Span; within<T>(work: () => T): T; end(error?: unknown): void } {
  const span = trace.getTracer(TRACER_NAME).startSpan(name, { attributes });
  const active = trace.setSpan(context.active(), span);
  return {
    span,
    within: (work) => context.with(active, work),
    end(error) {
      if (error !== undefined) failSpan(span, error);
      span.end();
    },
  };
}

/** Marks a span failed by `error`: its exception event and an error status with its message. */
export function failSpan(span: Span, error: unknown): void {
  const exception = error instanceof Error ? error : new Error(String(error));
  span.recordException(exception);
  span.setStatus({ code: SpanStatusCode.ERROR, message: exception.message });
}

/**
 * The store's statements as spans (`DatabaseOptions.onQuery`, which hears each one after it ran, in the caller's
 * context): `store <verb>` (`store select`, `store begin`) under the span that ran it, with its SQL (placeholders,
 * never values), timed from its reported duration. None outside a trace (background loops).
 */
export function storeQuerySpans(system: 'sqlite' | 'postgresql'): (query: { sql: string; verb: string; durationMs: number }) => void {
  return ({ sql, verb, durationMs }) => {
    if (!trace.getActiveSpan()) return;
    const endMs = Date.now();
    const span = trace.getTracer(TRACER_NAME).startSpan(`store ${verb}`, {
      startTime: endMs - durationMs,
      attributes: { 'db.system.name': system, 'db.query.text': sql.length > 1000 ? `${sql.slice(0, 1000)}…` : sql },
    });
    span.end(endMs);
  };
}
