/**
 * OpenTelemetry traces: the SDK behind `@opentelemetry/api`, off unless an OTLP endpoint is configured.
 *
 * The rest of the server only ever calls the API (`spans.ts` here, and `api/trace-hooks.ts`): with tracing off the
 * API's global tracer is its no-op one, so a span costs an object and no export. With it on, this module installs,
 * for the process, a tracer provider whose batches go to the endpoint as OTLP/HTTP JSON, the AsyncLocalStorage
 * context manager (a span started in a request is the parent of what that request awaits) and the W3C
 * `traceparent` propagator (a caller's trace continues here). No module is patched: every span is one the code
 * starts itself; and the SDK's modules are loaded only when tracing is on (they take ~120 ms to load), so start-up
 * without tracing pays nothing for it.
 *
 * The API's globals are per process, and a process may build several apps (tests): the last app that turns tracing
 * on owns them, and gives them back when it closes (`shutdown`, which first sends what is still buffered).
 */
import { context, diag, DiagLogLevel, propagation, trace, type DiagLogger } from '@opentelemetry/api';
import type { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';

export interface TracingOptions {
  /** The OTLP/HTTP traces URL (`…/v1/traces`); null turns tracing off. */
  url: string | null;
  serviceName: string;
  serviceVersion: string;
  /** Sent with every export (e.g. a collector's credentials). */
  headers: Record<string, string>;
  /** Where the SDK's own complaints go (a failed export, a full queue): the process's logger, at warn. */
  onWarning: (message: string) => void;
}

export interface Tracing {
  readonly enabled: boolean;
  /** Sends the spans still buffered and stops tracing (idempotent). */
  shutdown(): Promise<void>;
}

const OFF: Tracing = { enabled: false, shutdown: async () => {} };

/** The provider that owns the API's globals now, if any: `shutdown` gives them back only if still its own. */
let installed: BasicTracerProvider | null = null;

/** Turns tracing on for this process when `options.url` is set; otherwise answers a `Tracing` that does nothing. */
export async function startTracing(options: TracingOptions): Promise<Tracing> {
  if (!options.url) return OFF;
  const [{ AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }, { OTLPTraceExporter }, { resourceFromAttributes }, sdk, semconv] =
    await Promise.all([
      import('@opentelemetry/context-async-hooks'),
      import('@opentelemetry/core'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/semantic-conventions'),
    ]);
  const { BasicTracerProvider, BatchSpanProcessor } = sdk;
  const { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } = semconv;
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName, [ATTR_SERVICE_VERSION]: options.serviceVersion }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: options.url, headers: options.headers }))],
  });
  // Another app of this process may hold the globals: the API sets each only once unless disabled first.
  trace.disable();
  context.disable();
  propagation.disable();
  diag.disable();
  diag.setLogger(diagLogger(options.onWarning), DiagLogLevel.WARN);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  installed = provider;
  let stopping: Promise<void> | undefined;
  return {
    enabled: true,
    shutdown() {
      stopping ??= (async () => {
        await provider.shutdown().catch((error: unknown) => options.onWarning(`sending the last spans failed: ${(error as Error).message}`));
        if (installed !== provider) return;
        installed = null;
        trace.disable();
        context.disable();
        propagation.disable();
        diag.disable();
      })();
      return stopping;
    },
  };
}

/** The SDK's diagnostics at warn and above, as one line each. */
function diagLogger(onWarning: (message: string) => void): DiagLogger {
  const write = (message: string, ...args: unknown[]) =>
    onWarning([message, ...args.map((arg) => (arg instanceof Error ? arg.message : typeof arg === 'string' ? arg : JSON.stringify(arg)))].join(' '));
  const ignore = () => {};
  return { error: write, warn: write, info: ignore, debug: ignore, verbose: ignore };
}
