/**
 * The server's Prometheus metrics (`prom-client`), served as text by the admin listener's `GET /metrics`.
 *
 * One registry per app, not prom-client's global one: a process may build several apps (tests, a restart in
 * place), and each must count only its own. The metrics are fed two ways: the app records what passes through it
 * (requests, errors, executions, VM acquisitions, webhook attempts) with the `record*` methods, and the gauges
 * that describe a state (VMs by status, idle pooled VMs, undelivered webhooks) ask their `MetricSources` at each
 * scrape, so they are never stale. This module knows nothing of the core: whoever builds it wires it (app-workers.ts).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The states the gauges read at each scrape; a source that fails leaves its gauge empty for that scrape. */
export interface MetricSources {
  /** This node's VMs that are not ended, by status and template. */
  vmsByStatus(): Promise<{ status: string; template: string; count: number }[]>;
  /** Idle pooled VMs by variant (`<vcpus>:<memoryMb>`, a template's id before it for other templates). */
  poolCounts(): Record<string, number>;
  /** Webhook deliveries waiting for an attempt (due now or later). */
  webhookQueueDepth(): Promise<number>;
}

/** Store statements: SQLite answers in microseconds, PostgreSQL over a network in milliseconds. */
const STORE_BUCKETS = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
/** The statement verbs counted apart; any other is `other` (a label never takes a value from SQL text as is). */
const STORE_VERBS = new Set(['select', 'insert', 'update', 'delete', 'begin', 'commit', 'rollback', 'with']);

/** Latency buckets in seconds: a warm call is milliseconds, a VM restore under TCG seconds, a long run minutes. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export class Metrics {
  private readonly registry = new Registry();
  private readonly httpDuration = this.histogram(
    'sandboxd_http_request_duration_seconds',
    'HTTP requests of the public listener by method, route pattern and status code, until the response was sent',
    ['method', 'route', 'status'],
  );
  private readonly errors = this.counter('sandboxd_errors_total', 'Error responses by their code (docs/errors.md)', ['code', 'status']);
  private readonly executeDuration = this.histogram(
    'sandboxd_execute_duration_seconds',
    'Executions from their start to their end (a new VM included when the run waited for one), by language and final status',
    ['language', 'status'],
  );
  private readonly acquireDuration = this.histogram(
    'sandboxd_vm_acquire_duration_seconds',
    'VMs handed to a session or run: taken from the warm pool (from_pool="true") or restored from a snapshot',
    ['from_pool'],
  );
  private readonly agentCallDuration = this.histogram(
    'sandboxd_agent_call_duration_seconds',
    "Calls to a VM's guest agent by call (exec, run_python, write_file, …) and outcome, the wait for the VM's link included; an exec lasts as long as its command",
    ['call', 'outcome'],
  );
  private readonly storeQueryDuration = this.histogram(
    'sandboxd_store_query_duration_seconds',
    "The store's statements by their verb (select, insert, update, delete, begin, commit, other), as the driver timed them",
    ['verb'],
    STORE_BUCKETS,
  );
  private readonly webhookAttempts = this.counter('sandboxd_webhook_attempts_total', 'Webhook delivery attempts by the status they left the delivery in', [
    'status',
  ]);
  private readonly backgroundFailures = this.counter(
    'sandboxd_background_failures_total',
    'Failed turns of background loops (log writes, reconciles, sweeps, retention, the warm pool refill, webhook dispatch, …) by loop; each is also logged',
    ['loop'],
  );
  private readonly egressDecisions = this.counter(
    'sandboxd_egress_decisions_total',
    "Connection attempts of VMs decided by this node's egress enforcement, allowed or denied",
    ['action'],
  );

  constructor(sources: MetricSources, onSourceError: (metric: string, error: unknown) => void) {
    collectDefaultMetrics({ register: this.registry, prefix: 'sandboxd_' });
    const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[], collect: (g: Gauge<L>) => Promise<void>) =>
      new Gauge<L>({
        name,
        help,
        labelNames,
        registers: [this.registry],
        async collect() {
          this.reset();
          await collect(this).catch((error: unknown) => onSourceError(name, error));
        },
      });
    gauge('sandboxd_vms', "This node's VMs that have not ended, by status and template", ['status', 'template'], async (g) => {
      for (const { status, template, count } of await sources.vmsByStatus()) g.set({ status, template }, count);
    });
    gauge('sandboxd_pool_idle_vms', 'Restored, idle VMs in the warm pool by variant', ['variant'], async (g) => {
      for (const [variant, count] of Object.entries(sources.poolCounts())) g.set({ variant }, count);
    });
    gauge('sandboxd_webhook_queue_depth', 'Webhook deliveries waiting for an attempt', [], async (g) => g.set(await sources.webhookQueueDepth()));
  }

  /** A response of the public listener; `route` is the matched pattern (`/v1/sessions/:session_id`), never the raw URL. */
  recordRequest(method: string, route: string, status: number, seconds: number): void {
    observe(this.httpDuration, { method, route, status: String(status) }, seconds);
  }

  recordError(code: string, status: number): void {
    this.errors.inc({ code, status: String(status) });
  }

  /** A run's duration from its record's start and end (ISO times); a run without both is not observed. */
  recordExecution(language: string, status: string, createdAt: string, completedAt: string | null): void {
    observe(this.executeDuration, { language, status }, (Date.parse(completedAt ?? '') - Date.parse(createdAt)) / 1000);
  }

  recordAcquire(fromPool: boolean, seconds: number): void {
    observe(this.acquireDuration, { from_pool: String(fromPool) }, seconds);
  }

  recordAgentCall(call: string, seconds: number, ok: boolean): void {
    observe(this.agentCallDuration, { call, outcome: ok ? 'ok' : 'error' }, seconds);
  }

  /** One statement of the store (`DatabaseOptions.onQuery`), by its verb (bounded: any verb not listed is `other`). */
  recordStoreQuery(verb: string, durationMs: number): void {
    observe(this.storeQueryDuration, { verb: STORE_VERBS.has(verb) ? verb : 'other' }, durationMs / 1000);
  }

  recordWebhookAttempt(status: string): void {
    this.webhookAttempts.inc({ status });
  }

  /** A failed turn of the background loop `loop` (snake_case). */
  recordBackgroundFailure(loop: string): void {
    this.backgroundFailures.inc({ loop });
  }

  recordEgressDecision(action: 'allow' | 'deny'): void {
    this.egressDecisions.inc({ action });
  }

  /** The Prometheus text exposition, and its content type. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  private histogram<L extends string>(name: string, help: string, labelNames: readonly L[], buckets = LATENCY_BUCKETS): Histogram<L> {
    return new Histogram<L>({ name, help, labelNames, buckets, registers: [this.registry] });
  }

  private counter<L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> {
    return new Counter<L>({ name, help, labelNames, registers: [this.registry] });
  }
}

/**
 * Observes a duration unless it is not a number: prom-client throws on NaN, and the recorders run inside the work
 * they count (an execution's end, a response), which a metric must never fail.
 */
function observe<L extends string>(histogram: Histogram<L>, labels: Partial<Record<L, string>>, seconds: number): void {
  if (Number.isFinite(seconds) && seconds >= 0) histogram.observe(labels, seconds);
}
