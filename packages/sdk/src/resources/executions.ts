/** Execution (task) records: get, list, and waiting for an asynchronous run to complete. */
import type { ExecuteResult, ExecutionRecord } from '../api-types.ts';
import { ExecutionError } from '../errors.ts';
import type { Transport } from '../transport.ts';
import { offsetPages, type PagedList } from '../pagination.ts';
import { withCamelCase } from '../camel-case.ts';

export interface WaitOptions {
  /** Milliseconds between polls (default 1000, as the original clients poll). */
  pollInterval?: number;
  /** Give up after this many milliseconds (default: no limit; the server ends runs at their deadline). */
  timeout?: number;
  /** Throw ExecutionError when the run completes as failed or timed out. */
  throwOnError?: boolean;
  signal?: AbortSignal;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

/** What a run answered, whether from the execute call or from its record polled later (a run that outlived its wait). */
export type RunResult = ExecuteResult & { error?: string | null };

/** An execution record in the shape of the execute answer, so callers handle both answers one way. */
export function recordAsResult(record: ExecutionRecord): RunResult {
  return withCamelCase({
    execution_id: record.id,
    session_id: record.session_id,
    vm_id: record.vm_id,
    status: record.status,
    exit_code: record.exit_code,
    stdout: record.serialized_stdout,
    stderr: record.serialized_stderr,
    stdout_truncated: record.stdout_truncated,
    stderr_truncated: record.stderr_truncated,
    execution_time: record.execution_time,
    cpu_time: record.cpu_time,
    error: record.error,
    results: record.results,
    exception: record.exception,
    context_id: record.context_id,
  });
}

/** Throws ExecutionError for a record that completed badly, when asked to. */
export function assertSucceeded(record: ExecutionRecord): ExecutionRecord {
  if (record.status === 'completed' && (record.exit_code === 0 || record.exit_code === null)) return record;
  throw new ExecutionError(record.error ?? `execution ${record.id} ${record.status} with exit code ${record.exit_code}`, {
    executionId: record.id,
    sessionId: record.session_id,
    exitCode: record.exit_code,
    stdout: record.serialized_stdout,
    stderr: record.serialized_stderr,
  });
}

export class Executions {
  constructor(private readonly transport: Transport) {}

  async get(id: number, options: { signal?: AbortSignal } = {}): Promise<ExecutionRecord> {
    return this.transport.call('/v1/executions/{item_id}', 'get', { params: { item_id: id }, ...options });
  }

  /**
   * Stops a queued or running execution and answers its final record (status `failed`): a command is killed with its
   * process group, Python is interrupted (the interpreter keeps its state); the VM and its other runs go on. A run
   * that has ended already is a SandboxdError with status 409 (CONFLICT).
   */
  async cancel(id: number, options: { signal?: AbortSignal } = {}): Promise<ExecutionRecord> {
    return this.transport.call('/v1/executions/{item_id}/cancel', 'post', { params: { item_id: id }, ...options });
  }

  /** The caller's execution records, newest first: await it for a page, or `for await` over every record. */
  list(options: { sessionId?: string; limit?: number; offset?: number; signal?: AbortSignal } = {}): PagedList<ExecutionRecord> {
    return offsetPages(options, (query) =>
      this.transport.call('/v1/executions/', 'get', { query: { session_id: options.sessionId, ...query }, signal: options.signal }),
    );
  }

  /** Polls the record (once a second by default) until `is_complete`. */
  async wait(id: number, options: WaitOptions = {}): Promise<ExecutionRecord> {
    const interval = options.pollInterval ?? 1000;
    const deadline = options.timeout === undefined ? Infinity : Date.now() + options.timeout;
    for (;;) {
      const record = await this.get(id, options.signal ? { signal: options.signal } : {});
      if (record.is_complete) return options.throwOnError ? assertSucceeded(record) : record;
      if (Date.now() + interval > deadline) {
        throw new ExecutionError(`execution ${id} is still ${record.status} after ${options.timeout} ms`, { executionId: id, sessionId: record.session_id });
      }
      await sleep(interval, options.signal);
    }
  }
}

/** A run started with `executeAsync`: its id, and `wait()` for its record. */
export class AsyncExecution {
  constructor(
    private readonly executions: Executions,
    /** The task (execution) id. */
    readonly id: number,
    readonly sessionId: string,
  ) {}

  /** Stops the run (see `Executions.cancel`) and answers its final record. */
  cancel(options: { signal?: AbortSignal } = {}): Promise<ExecutionRecord> {
    return this.executions.cancel(this.id, options);
  }

  get(options: { signal?: AbortSignal } = {}): Promise<ExecutionRecord> {
    return this.executions.get(this.id, options);
  }

  /** Polls once a second (by default) until the run is complete. */
  wait(options: WaitOptions = {}): Promise<ExecutionRecord> {
    return this.executions.wait(this.id, options);
  }
}
