/**
 * The two ways the Run panel runs code, behind one shape: Bash as a background process whose output is followed
 * live (POST …/processes, then its output as Server-Sent Events), Python in the session's stateful interpreter
 * (POST /execute_async, then its record until it is complete). The API streams process output but not a Python
 * execution's: Python output arrives when the run ends. Either can be stopped without ending the VM.
 */
import { api, ApiError, type ProcessEvent, type ProcessInfo, type RichResult, type TaskRecord } from '../../api.ts';
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

function pythonEnd(record: TaskRecord): RunEnd {
  return {
    exitCode: record.exit_code,
    signal: null,
    seconds: record.execution_time,
    problem: record.status === 'completed' || record.exception ? null : record.error,
    results: record.results,
  };
}

/** Python in the session's interpreter: started asynchronously so that it has an id to cancel, then polled. */
async function startPython(sessionId: string, code: string, listener: RunListener): Promise<RunHandle> {
  const { task_id: taskId } = await api<{ task_id: number }>('POST', '/execute_async', { session_id: sessionId, language: 'python', code });
  let ended = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const finish = (record: TaskRecord) => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    if (record.serialized_stdout) listener.output('stdout', record.serialized_stdout);
    if (record.serialized_stderr) listener.output('stderr', record.serialized_stderr);
    if (record.stdout_truncated || record.stderr_truncated) listener.note('The output was cut: the server keeps a bounded amount of each stream');
    listener.end(pythonEnd(record));
  };
  const poll = async () => {
    try {
      const record = await api<TaskRecord>('GET', `/v1/executions/${taskId}`);
      if (record.is_complete) return finish(record);
    } catch (error) {
      if (!ended) {
        ended = true;
        listener.fail(error);
      }
      return;
    }
    if (!ended) timer = setTimeout(() => void poll(), PYTHON_POLL_MS);
  };
  timer = setTimeout(() => void poll(), PYTHON_POLL_MS);
  return {
    stop: async () => {
      try {
        finish(await api<TaskRecord>('POST', `/v1/executions/${taskId}/cancel`));
      } catch (error) {
        // 409: it ended on its own meanwhile; the next poll reads how.
        if (!(error instanceof ApiError && error.status === 409)) throw error;
      }
    },
    detach: () => {
      ended = true;
      clearTimeout(timer);
    },
  };
}
