/** POST /execute and /v1/execute_async: run code or a command in a session's VM. */
import type { ExecuteResult } from '../api-types.ts';
import { errorFor, ExecutionError, NetworkError } from '../errors.ts';
import { NDJSON, ndjsonEvents } from '../ndjson.ts';
import type { Transport } from '../transport.ts';
import { AsyncExecution, type Executions } from './executions.ts';
import { wholeSeconds } from '../durations.ts';

export type Language = 'python' | 'bash' | 'node';

export interface ExecuteOptions {
  /** `python` (default: a stateful interpreter per session), `bash` or `node` (a fresh process each call). */
  language?: Language;
  /**
   * Milliseconds the server waits for the result, rounded up to whole seconds, 1 s to 600 s (default 15 s). A
   * longer run answers 408, thrown as an ExecutionError with `executionId`: the run goes on;
   * `client.executions.wait(id)` gets its result.
   */
  timeoutMs?: number;
  /** @deprecated Seconds; use `timeoutMs` (milliseconds, like every duration of this client). */
  timeout?: number;
  /** Throw ExecutionError when the run fails (non-zero exit code, Python exception, killed at its deadline). */
  throwOnError?: boolean;
  /** Python only: run in this context of the session (`session.createContext()`); default: the session's own interpreter. */
  contextId?: string;
  /**
   * Each piece of standard output as the code writes it (Python's too), instead of all of it at the end (E2B's
   * `onStdout`); the result still has all of it. Giving either callback streams the run (`Accept: application/x-ndjson`).
   */
  onStdout?: (text: string) => void;
  /** Each piece of standard error as the code writes it. */
  onStderr?: (text: string) => void;
  /**
   * A streamed run (with `onStdout` or `onStderr`) has its VM and runs: its execution id, e.g. for
   * `client.executions.cancel(id)`, which stops that run only.
   */
  onStart?: (run: { executionId: number; sessionId: string }) => void;
  signal?: AbortSignal;
}

/** An event of a streamed execute (see the `/execute` operation in the OpenAPI document). */
interface StreamedRunEvent {
  type: 'start' | 'stdout' | 'stderr' | 'end' | 'timeout' | 'error' | 'dropped';
  data?: string;
  execution?: ExecuteResult;
  execution_id?: number;
  session_id?: string;
  status?: number;
  code?: string;
  detail?: string;
}

/** The spec's default wait of a client library for execute, in seconds. */
export const DEFAULT_EXECUTE_TIMEOUT_SECONDS = 15;
/** Extra time the HTTP call allows beyond the server-side wait, for starting a VM and the answer. */
const HTTP_MARGIN_MS = 60_000;

function executeBody(code: string, sessionId: string | null, options: ExecuteOptions) {
  const language = options.language ?? 'python';
  return {
    ...(language === 'bash' ? { command: code } : { code }),
    language,
    session_id: sessionId,
    timeout: wholeSeconds(options.timeoutMs, options.timeout, ['timeoutMs', 'timeout']) ?? DEFAULT_EXECUTE_TIMEOUT_SECONDS,
    ...(options.contextId ? { context_id: options.contextId } : {}),
  };
}

/** Throws ExecutionError for a failed result, when asked to. */
function checked(result: ExecuteResult, throwOnError: boolean | undefined): ExecuteResult {
  if (!throwOnError || (result.status === 'completed' && (result.exit_code === 0 || result.exit_code === null))) return result;
  const firstErrorLine = result.stderr.trim().split('\n').pop();
  throw new ExecutionError(
    `execution ${result.execution_id} ${result.status} with exit code ${result.exit_code}${firstErrorLine ? `: ${firstErrorLine}` : ''}`,
    {
      executionId: result.execution_id,
      sessionId: result.session_id,
      exitCode: result.exit_code,
      stdout: result.stdout,
      stderr: result.stderr,
    },
  );
}

export class Execution {
  constructor(
    private readonly transport: Transport,
    private readonly executions: Executions,
  ) {}

  /** Runs and waits (never retried once sent: the code may have run). `sessionId` null: a new session. */
  async execute(code: string, sessionId: string | null, options: ExecuteOptions = {}): Promise<ExecuteResult> {
    const body = executeBody(code, sessionId, options);
    if (options.onStdout || options.onStderr) return checked(await this.executeStreamed(body, options), options.throwOnError);
    const result = await this.transport.call('/execute', 'post', {
      json: body,
      kind: 'execute',
      idempotent: false,
      timeout: Math.max(this.transport.settings.timeout, body.timeout * 1000 + HTTP_MARGIN_MS),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return checked(result, options.throwOnError);
  }

  /**
   * The run as it happens (NDJSON events: start, stdout/stderr, then end, timeout or error): output goes to the
   * callbacks, the `end` event's execution is the answer; `timeout` and `error` are thrown as the plain call's 408
   * and error answers are.
   */
  private async executeStreamed(body: ReturnType<typeof executeBody>, options: ExecuteOptions): Promise<ExecuteResult> {
    const operation = 'POST /execute';
    const response = (await this.transport.request(
      'POST',
      '/execute',
      {
        json: body,
        kind: 'execute',
        idempotent: false,
        headers: { accept: NDJSON },
        timeout: Math.max(this.transport.settings.timeout, body.timeout * 1000 + HTTP_MARGIN_MS),
        ...(options.signal ? { signal: options.signal } : {}),
      },
      'stream',
    )) as Response;
    const requestId = response.headers.get('x-request-id') ?? undefined;
    for await (const event of ndjsonEvents<StreamedRunEvent>(response)) {
      if (event.type === 'start' && event.execution_id !== undefined && event.session_id !== undefined)
        options.onStart?.({ executionId: event.execution_id, sessionId: event.session_id });
      else if (event.type === 'stdout') options.onStdout?.(event.data ?? '');
      else if (event.type === 'stderr') options.onStderr?.(event.data ?? '');
      else if (event.type === 'end' && event.execution) return event.execution;
      else if (event.type === 'timeout' || event.type === 'error') {
        const status = event.type === 'timeout' ? 408 : (event.status ?? 500);
        const code = event.type === 'timeout' ? 'EXECUTION_TIMEOUT' : event.code;
        const facts = {
          ...(event.execution_id !== undefined ? { executionId: event.execution_id } : {}),
          ...(event.session_id !== undefined ? { sessionId: event.session_id } : {}),
        };
        throw errorFor(
          { status, code, kind: 'execute' },
          event.detail ?? `${operation}: ${event.type}`,
          { status, code, body: event, requestId, operation },
          facts,
        );
      }
    }
    throw new NetworkError(`${operation}: the stream ended before the run's result`, { operation, ...(requestId ? { requestId } : {}) });
  }

  /** Starts a run and returns at once; `wait()` on the result polls its record. */
  async executeAsync(code: string, sessionId: string | null, options: Omit<ExecuteOptions, 'throwOnError'> = {}): Promise<AsyncExecution> {
    const started = await this.transport.call('/v1/execute_async', 'post', {
      json: executeBody(code, sessionId, options),
      kind: 'execute',
      idempotent: false,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return new AsyncExecution(this.executions, started.task_id, started.session_id);
  }
}
