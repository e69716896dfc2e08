/**
 * The two ways the Run panel runs code, behind one shape: Bash as a background process whose output is followed
 * live (POST …/processes, then its output as Server-Sent Events), Python in the session's stateful interpreter
 * (a streamed POST /execute: its output as it is printed, then its result). Either can be stopped without ending
 * the VM.
 */
import { api, ApiError, send, type ExecuteResponse, type ProcessEvent, type ProcessInfo, type RichResult, type TaskRecord } from '../../api.ts';
import type { OutputStream } from './output-buffer.ts';
import { sessionPath } from './session-path.ts';

export type RunLanguage = 'python' | 'bash';

/** How a run ended. */
export interface RunEnd {
  exitCode: number | null;
  /** The signal that ended a command (SIGKILL after Stop). */
  signal: string | null;
  seconds: number | null;
  /** Why it did not end by itself, in the API's words (cancelled, timed out, its VM went away), else null. */
  problem: string | null;
  results: RichResult[];
}

/** What a driver reports while it runs; `end` or `fail` comes once, last. */
export interface RunListener {
  output(stream: OutputStream, text: string): void;
  /** Something the reader should know that is not output (output skipped by the server). */
  note(text: string): void;
  end(end: RunEnd): void;
  fail(error: unknown): void;
}

/** A started run. */
export interface RunHandle {
  /** Cancels the run in the VM (the VM lives on); its end still comes through the listener. */
  stop(): Promise<void>;
  /** Stops following it (the page went away); the run itself goes on. */
  detach(): void;
}

/** How often a Python run's record is read while it runs. */
const PYTHON_POLL_MS = 300;
/** How long a streamed Python run is followed before the console polls its record instead (the API's longest wait). */
const STREAM_WAIT_SECONDS = 600;

/** Starts `code` in the session's VM and reports to `listener`. */
export function startRun(sessionId: string, language: RunLanguage, code: string, listener: RunListener): Promise<RunHandle> {
  return language === 'bash' ? startCommand(sessionId, code, listener) : startPython(sessionId, code, listener);
}

function secondsBetween(from: string, to: string | null): number | null {
  return to ? (Date.parse(to) - Date.parse(from)) / 1000 : null;
}

function commandEnd(process: ProcessInfo): RunEnd {
  const problem = process.timed_out ? 'timed out' : process.status === 'failed' ? (process.error ?? 'its VM went away') : null;
  return { exitCode: process.exit_code, signal: process.signal, seconds: secondsBetween(process.started_at, process.ended_at), problem, results: [] };
}

/**
 * A Bash command as a background process. EventSource follows its output: it sends the session cookie, and when
 * the connection drops it reconnects by itself with Last-Event-ID, from which the server resumes the output.
 */
async function startCommand(sessionId: string, command: string, listener: RunListener): Promise<RunHandle> {
  const started = await api<ProcessInfo>('POST', sessionPath(sessionId, '/processes'), { command, tag: 'console' });
  const processPath = (rest = '') => sessionPath(sessionId, `/processes/${encodeURIComponent(started.process_id)}${rest}`);
  const source = new EventSource(processPath('/output'));
  let ended = false;
  const finish = (process: ProcessInfo) => {
    if (ended) return;
    ended = true;
    source.close();
    listener.end(commandEnd(process));
  };
  const eventOf = (message: Event) => JSON.parse((message as MessageEvent<string>).data) as ProcessEvent;
  for (const stream of ['stdout', 'stderr'] as const) {
    source.addEventListener(stream, (message) => listener.output(stream, eventOf(message).data ?? ''));
  }
  source.addEventListener('dropped', (message) =>
    listener.note(`${eventOf(message).events ?? 'some'} output events were skipped: the server keeps the newest 4 MiB of a run's output`),
  );
  source.addEventListener('exit', (message) => {
    const { process } = eventOf(message);
    if (process) finish(process);
  });
  // A closed source will not reconnect (the server refused it): what became of the process says why.
  source.addEventListener('error', () => {
    if (source.readyState !== EventSource.CLOSED || ended) return;
    api<ProcessInfo>('GET', processPath()).then(
      (process) => {
        if (process.status !== 'running') finish(process);
        else if (!ended) {
          ended = true;
          listener.fail(new Error(`The console lost the output stream; the command still runs in the VM (process ${started.process_id})`));
        }
      },
      (error: unknown) => {
        if (ended) return;
        ended = true;
        source.close();
        listener.fail(error);
      },
    );
  });
  return {
    stop: async () => {
      // Answers once the process ended; its exit event follows on the stream, after the last of its output.
      const process = await api<ProcessInfo>('DELETE', processPath());
      setTimeout(() => finish(process), 5_000);
    },
    detach: () => {
      ended = true;
      source.close();
    },
  };
}

/** How a Python run ended, from its execute answer or its record (the same fields). */
function pythonEnd(run: Pick<TaskRecord, 'exit_code' | 'execution_time' | 'status' | 'exception' | 'results'> & { error?: string | null }): RunEnd {
  return {
    exitCode: run.exit_code,
    signal: null,
    seconds: run.execution_time,
    problem: run.status === 'completed' || run.exception ? null : (run.error ?? run.status),
    results: run.results,
  };
}

/** An event of a streamed execute (`POST /execute` with `Accept: application/x-ndjson`). */
interface RunEvent {
  type: 'start' | 'stdout' | 'stderr' | 'end' | 'timeout' | 'error' | 'dropped';
  data?: string;
  execution?: ExecuteResponse;
  /** `end`: why the run did not complete (cancelled, killed at its deadline), as its record says. */
  error?: string | null;
  execution_id?: number;
  status?: number;
  code?: string;
  detail?: string;
  characters?: number;
}

/** The events of an NDJSON answer as they arrive (empty lines are keep-alives). */
async function* runEvents(response: Response): AsyncGenerator<RunEvent> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (line !== '') yield JSON.parse(line) as RunEvent;
    }
  }
}

/**
 * Python in the session's interpreter, streamed: its output shows as the code prints it; the `start` event names
 * the execution that Stop cancels (the interpreter keeps its state). A run that outlives the wait goes on: its
 * record is then polled until it is complete.
 */
async function startPython(sessionId: string, code: string, listener: RunListener): Promise<RunHandle> {
  const response = await send('POST', '/execute', { session_id: sessionId, language: 'python', code, timeout: STREAM_WAIT_SECONDS }, 'application/x-ndjson');
  const events = runEvents(response);
  const first = await events.next();
  if (first.done || first.value.type !== 'start' || first.value.execution_id === undefined) throw new Error('The run did not start: the answer was cut');
  const executionId = first.value.execution_id;
  let ended = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const finish = (end: RunEnd) => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    listener.end(end);
  };
  const fail = (error: unknown) => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    listener.fail(error);
  };
  const poll = async () => {
    try {
      const record = await api<TaskRecord>('GET', `/v1/executions/${executionId}`);
      if (record.is_complete) {
        // What the stream did not show before it stopped following: the record's output is whole.
        return finish(pythonEnd(record));
      }
    } catch (error) {
      return fail(error);
    }
    if (!ended) timer = setTimeout(() => void poll(), PYTHON_POLL_MS);
  };
  void (async () => {
    try {
      for await (const event of events) {
        if (ended) return;
        if (event.type === 'stdout' || event.type === 'stderr') listener.output(event.type, event.data ?? '');
        else if (event.type === 'dropped')
          listener.note(`${event.characters ?? 'some'} characters of output were skipped while the page read slowly (the record keeps them)`);
        else if (event.type === 'end' && event.execution) return finish(pythonEnd({ ...event.execution, error: event.error ?? null }));
        else if (event.type === 'timeout') return void poll();
        else if (event.type === 'error') return fail(new ApiError(event.status ?? 500, event.code ?? 'INTERNAL', event.detail ?? 'the run failed'));
      }
      // The answer ended without the run's end (a proxy cut it): the record says how it goes on.
      if (!ended) void poll();
    } catch (error) {
      if (!ended) void poll().catch(() => fail(error));
    }
  })();
  return {
    stop: async () => {
      try {
        finish(pythonEnd(await api<TaskRecord>('POST', `/v1/executions/${executionId}/cancel`)));
      } catch (error) {
        // 409: it ended on its own meanwhile; the stream brings how.
        if (!(error instanceof ApiError && error.status === 409)) throw error;
      }
    },
    detach: () => {
      ended = true;
      clearTimeout(timer);
      void events.return(undefined);
    },
  };
}
