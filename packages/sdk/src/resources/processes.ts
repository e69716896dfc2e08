/**
 * /v1/sessions/{id}/processes…: background processes in a session's VM (E2B's `commands.run({ background })`,
 * `commands.list/connect/sendStdin/kill`): start one, follow its output as it happens (NDJSON read with fetch), feed
 * its stdin, send it signals, kill it. `run` starts a process and waits for its end, handing output to callbacks as
 * it arrives; aborting its signal kills the process.
 */
import { NDJSON, ndjsonEvents } from '../ndjson.ts';
import type { JsonBody, Schemas } from '../api-types.ts';
import { encodeBase64 } from '../base64.ts';
import { NetworkError } from '../errors.ts';
import { backoffDelayMs, sleep, type Transport } from '../transport.ts';
import { secondsField } from '../durations.ts';

/** How many times in a row `output` opens a broken stream again before it gives up. */
export const MAX_OUTPUT_RESUMES = 5;
/** The first wait before a resume, milliseconds (doubling, jittered). */
const RESUME_DELAY_MS = 100;

export type ProcessInfo = Schemas['ProcessInfo'];
/** A signal the API sends: SIGINT, SIGTERM, SIGKILL, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGSTOP or SIGCONT. */
export type ProcessSignal = JsonBody<'/v1/sessions/{session_id}/processes/{process_id}/signal', 'post'>['signal'];

/** Every signal the API sends, for callers that offer a choice (the CLI, the MCP tool). */
export const PROCESS_SIGNALS = [
  'SIGINT',
  'SIGTERM',
  'SIGKILL',
  'SIGHUP',
  'SIGQUIT',
  'SIGUSR1',
  'SIGUSR2',
  'SIGSTOP',
  'SIGCONT',
] as const satisfies readonly ProcessSignal[];
// The list is the served document's: a signal it adds and this list lacks fails the type check here.
const ALL_SIGNALS_LISTED: Exclude<ProcessSignal, (typeof PROCESS_SIGNALS)[number]> extends never ? true : false = true;
void ALL_SIGNALS_LISTED;

/** One event of a process's output: `stdout`/`stderr` (text, or base64 with `encoding: 'base64'`), `dropped`, `exit`. */
export interface ProcessEvent {
  type: 'start' | 'stdout' | 'stderr' | 'dropped' | 'exit';
  /** stdout/stderr: the event number (pass the last one seen as `after` to resume). */
  seq?: number;
  data?: string;
  /** dropped: events no longer kept that were skipped. */
  events?: number;
  /** start and exit: the process. */
  process?: ProcessInfo;
}

export interface ProcessStartOptions {
  /** A program and its arguments, run directly (instead of a command line). */
  argv?: string[];
  /** Working directory (default: the user's home, /root for root). */
  cwd?: string;
  /** Environment on top of the session's. */
  env?: Record<string, string>;
  /** The account of the VM that runs it: `root` (default) or `user` (uid 1000, /home/user), or one a template added. */
  user?: string;
  /** Killed after this many milliseconds, rounded up to whole seconds (default: runs until the VM ends). */
  timeoutMs?: number;
  /** @deprecated Use `timeoutMs` (milliseconds, like every duration of this client). */
  timeoutSeconds?: number;
  /** Keep stdin open for `sendStdin` (default false: the program reads /dev/null). */
  stdin?: boolean;
  /** A label of yours, shown in lists. */
  tag?: string;
  signal?: AbortSignal;
}

export interface ProcessRunOptions extends ProcessStartOptions {
  /** Each piece of standard output as it arrives. */
  onStdout?: (text: string) => void;
  onStderr?: (text: string) => void;
  /** The process runs (its id, for `sendStdin`, `signal` or `kill` while it does). */
  onStart?: (process: ProcessInfo) => void;
}

/** What `run` answers: the ended process, and its whole output. */
export interface ProcessRunResult {
  process: ProcessInfo;
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

export class Processes {
  constructor(private readonly transport: Transport) {}

  private body(command: string | null, options: ProcessStartOptions) {
    return {
      ...(command !== null ? { command } : {}),
      ...(options.argv ? { argv: options.argv } : {}),
      ...(options.cwd ? { cwd: options.cwd } : {}),
      ...(options.env ? { env: options.env } : {}),
      ...secondsField('timeout_seconds', options.timeoutMs, options.timeoutSeconds, ['timeoutMs', 'timeoutSeconds']),
      ...(options.user ? { user: options.user } : {}),
      stdin: options.stdin === true,
      ...(options.tag ? { tag: options.tag } : {}),
    };
  }

  /** Starts `command` (a bash command line; or pass `argv` and null) in the background; answers once it runs. */
  async start(sessionId: string, command: string | null, options: ProcessStartOptions = {}): Promise<ProcessInfo> {
    return this.transport.call('/v1/sessions/{session_id}/processes', 'post', {
      params: { session_id: sessionId },
      json: this.body(command, options),
      kind: 'session',
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  /**
   * Runs `command` and waits for its end, calling `onStdout`/`onStderr` with output as it arrives. Aborting
   * `signal` kills the process (its whole process group) and rejects with the signal's reason. An answer that breaks
   * off once the process runs is followed on with `output` from its last event (see there).
   */
  async run(sessionId: string, command: string | null, options: ProcessRunOptions = {}): Promise<ProcessRunResult> {
    const { signal, ...rest } = options;
    signal?.throwIfAborted();
    // The stream is not tied to the caller's signal: an abort kills the process, whose end then closes it. Only the
    // wait for the answer is: an abort before it rejects at once (and the process it then names is killed).
    const responding = this.transport.request(
      'POST',
      `/v1/sessions/${encodeURIComponent(sessionId)}/processes`,
      { json: this.body(command, rest), headers: { accept: NDJSON }, kind: 'session', idempotent: false, timeout: 2 ** 31 - 1 },
      'stream',
    ) as Promise<Response>;
    const response = signal ? await this.untilAnswered(sessionId, responding, signal) : await responding;
    let processId: string | undefined;
    let ended: ProcessInfo | undefined;
    const stdout: string[] = [];
    const stderr: string[] = [];
    let lastSeq = 0;
    const onAbort = () => processId && void this.kill(sessionId, processId).catch(() => undefined);
    const take = (event: ProcessEvent) => {
      if (typeof event.seq === 'number') lastSeq = event.seq;
      if (event.type === 'start' && event.process) {
        processId = event.process.process_id;
        options.onStart?.(event.process);
        if (signal?.aborted) onAbort();
      } else if (event.type === 'stdout' && event.data !== undefined) {
        stdout.push(event.data);
        options.onStdout?.(event.data);
      } else if (event.type === 'stderr' && event.data !== undefined) {
        stderr.push(event.data);
        options.onStderr?.(event.data);
      } else if (event.type === 'exit' && event.process) ended = event.process;
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const events = ndjsonEvents<ProcessEvent>(response);
      try {
        for (;;) {
          let next: IteratorResult<ProcessEvent>;
          try {
            next = await events.next();
          } catch (error) {
            // Reading broke (a callback's own error is not caught here); without a process there is nothing to resume.
            if (!processId) throw error;
            break;
          }
          if (next.done) break;
          take(next.value);
        }
      } finally {
        await events.return(undefined);
      }
      // The answer broke off before the exit event (a reset connection): the rest from the last event it brought.
      if (!ended && processId) for await (const event of this.output(sessionId, processId, { after: lastSeq })) take(event);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    if (signal?.aborted) throw signal.reason;
    const process = ended ?? (processId ? await this.get(sessionId, processId) : undefined);
    if (!process) throw new Error('the process stream ended before the process started');
    return { process, exitCode: process.exit_code, stdout: stdout.join(''), stderr: stderr.join('') };
  }

  /** `responding`, or the signal's reason as soon as it aborts, in which case the process the answer starts is killed. */
  private untilAnswered(sessionId: string, responding: Promise<Response>, signal: AbortSignal): Promise<Response> {
    return new Promise<Response>((resolve, reject) => {
      let answered = false;
      const onAbort = () => {
        // Once answered, `run` reads the answer and handles the abort itself.
        if (answered) return;
        reject(signal.reason);
        responding.then((response) => this.killStarted(sessionId, response)).catch(() => undefined);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      responding
        .then((response) => {
          answered = true;
          resolve(response);
        }, reject)
        .finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /** Reads a run's answer up to its `start` event and kills the process it names (its caller gave up waiting). */
  private async killStarted(sessionId: string, response: Response): Promise<void> {
    let processId: string | undefined;
    // Leaving the loop closes the answer.
    for await (const event of ndjsonEvents<ProcessEvent>(response)) {
      if (event.type === 'start' && event.process) {
        processId = event.process.process_id;
        break;
      }
    }
    if (processId) await this.kill(sessionId, processId);
  }

  /** The session's running processes, and those that ended in the last 10 minutes. */
  async list(sessionId: string, options: { signal?: AbortSignal } = {}): Promise<ProcessInfo[]> {
    return (await this.transport.call('/v1/sessions/{session_id}/processes', 'get', { params: { session_id: sessionId }, kind: 'session', ...options }))
      .processes;
  }

  async get(sessionId: string, processId: string, options: { signal?: AbortSignal } = {}): Promise<ProcessInfo> {
    return this.transport.call('/v1/sessions/{session_id}/processes/{process_id}', 'get', {
      params: { session_id: sessionId, process_id: processId },
      ...options,
    });
  }

  /**
   * The process's output events after event `after` (0: from the oldest kept), then live ones until it ends
   * (`follow: false`: only what is there now), and its `exit` event when it ended. Stop early with `signal` or
   * `break`: the process runs on.
   *
   * A stream that breaks before the `exit` event (a reset connection, an answer cut short, or, when following, an
   * answer that ends without `exit`) is opened again from the last event number seen (`after`), so no event is
   * lost or repeated; up to {@link MAX_OUTPUT_RESUMES} times in a row without an event in between, 0.1 s, 0.2 s…
   * apart (jittered), then the last break is thrown as a NetworkError (a resume that cannot connect has first been
   * retried as the client retries any GET: `maxRetries`). An aborted `signal` is never resumed. With
   * `encoding: 'utf8'`, a character whose bytes two events split may come out as U+FFFD across a resume (the server
   * decodes per stream); `base64` resumes byte-exact.
   */
  async *output(
    sessionId: string,
    processId: string,
    options: { after?: number; follow?: boolean; encoding?: 'utf8' | 'base64'; signal?: AbortSignal } = {},
  ): AsyncGenerator<ProcessEvent> {
    const path = `/v1/sessions/${encodeURIComponent(sessionId)}/processes/${encodeURIComponent(processId)}/output`;
    const follow = options.follow ?? true;
    const { signal } = options;
    let after = options.after ?? 0;
    /** Breaks since the last event that arrived. */
    let breaks = 0;
    for (;;) {
      let lastBreak: unknown;
      // Each connection has its own controller, so the caller's signal holds no listener per resume.
      const connection = new AbortController();
      const onAbort = () => connection.abort(signal?.reason);
      if (signal?.aborted) throw signal.reason;
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        let response: Response | undefined;
        try {
          response = (await this.transport.request(
            'GET',
            path,
            {
              query: { after, follow: options.follow, encoding: options.encoding },
              headers: { accept: NDJSON },
              timeout: 2 ** 31 - 1,
              signal: connection.signal,
            },
            'stream',
          )) as Response;
        } catch (error) {
          // The first answer's errors are the caller's; a resume that cannot connect counts as one more break.
          if (signal?.aborted) throw signal.reason;
          if (breaks === 0 || !(error instanceof NetworkError)) throw error;
          lastBreak = error;
        }
        if (response) {
          const events = ndjsonEvents<ProcessEvent>(response);
          try {
            for (;;) {
              let next: IteratorResult<ProcessEvent>;
              try {
                next = await events.next();
              } catch (error) {
                if (signal?.aborted) throw signal.reason;
                lastBreak = error;
                break;
              }
              if (next.done) {
                if (!follow) return;
                lastBreak = new Error('the answer ended before the exit event');
                break;
              }
              const event = next.value;
              if (typeof event.seq === 'number') after = event.seq;
              breaks = 0;
              yield event;
              if (event.type === 'exit') return;
            }
          } finally {
            await events.return(undefined);
          }
        }
      } finally {
        signal?.removeEventListener('abort', onAbort);
      }
      breaks++;
      if (breaks > MAX_OUTPUT_RESUMES) {
        const why = lastBreak instanceof Error ? lastBreak.message : String(lastBreak);
        throw new NetworkError(`GET ${path}: the output stream broke off ${breaks} times in a row before the process ended (${why})`, {
          operation: `GET ${path}`,
          cause: lastBreak,
        });
      }
      await sleep(backoffDelayMs(RESUME_DELAY_MS, breaks - 1), signal);
    }
  }

  /** Writes to the stdin of a process started with `stdin: true` (`eof`: then closes it). */
  async sendStdin(
    sessionId: string,
    processId: string,
    data: string | Uint8Array,
    options: { eof?: boolean; signal?: AbortSignal } = {},
  ): Promise<ProcessInfo> {
    const payload = typeof data === 'string' ? { data } : { data_base64: encodeBase64(data) };
    return this.transport.call('/v1/sessions/{session_id}/processes/{process_id}/stdin', 'post', {
      params: { session_id: sessionId, process_id: processId },
      json: { ...payload, ...(options.eof ? { eof: true } : {}) },
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  /** Closes the process's stdin (it reads end of file). */
  closeStdin(sessionId: string, processId: string, options: { signal?: AbortSignal } = {}): Promise<ProcessInfo> {
    return this.sendStdin(sessionId, processId, '', { ...options, eof: true });
  }

  /** Sends a signal (e.g. `SIGTERM`) to the process's group. */
  async signal(sessionId: string, processId: string, signal: ProcessSignal, options: { signal?: AbortSignal } = {}): Promise<ProcessInfo> {
    return this.transport.call('/v1/sessions/{session_id}/processes/{process_id}/signal', 'post', {
      params: { session_id: sessionId, process_id: processId },
      json: { signal },
      ...options,
    });
  }

  /** Kills the process (SIGKILL to its group) and answers it once it ended. */
  async kill(sessionId: string, processId: string, options: { signal?: AbortSignal } = {}): Promise<ProcessInfo> {
    return this.transport.call('/v1/sessions/{session_id}/processes/{process_id}', 'delete', {
      params: { session_id: sessionId, process_id: processId },
      idempotent: true,
      ...options,
    });
  }
}

/** A session's processes: the calls of {@link Processes} with the session id bound (`session.processes`). */
export class SessionProcesses {
  constructor(
    private readonly processes: Processes,
    private readonly sessionId: string,
  ) {}

  start(command: string | null, options: ProcessStartOptions = {}): Promise<ProcessInfo> {
    return this.processes.start(this.sessionId, command, options);
  }

  run(command: string | null, options: ProcessRunOptions = {}): Promise<ProcessRunResult> {
    return this.processes.run(this.sessionId, command, options);
  }

  list(options: { signal?: AbortSignal } = {}): Promise<ProcessInfo[]> {
    return this.processes.list(this.sessionId, options);
  }

  get(processId: string, options: { signal?: AbortSignal } = {}): Promise<ProcessInfo> {
    return this.processes.get(this.sessionId, processId, options);
  }

  output(
    processId: string,
    options: { after?: number; follow?: boolean; encoding?: 'utf8' | 'base64'; signal?: AbortSignal } = {},
  ): AsyncGenerator<ProcessEvent> {
    return this.processes.output(this.sessionId, processId, options);
  }

  sendStdin(processId: string, data: string | Uint8Array, options: { eof?: boolean; signal?: AbortSignal } = {}): Promise<ProcessInfo> {
    return this.processes.sendStdin(this.sessionId, processId, data, options);
  }

  closeStdin(processId: string, options: { signal?: AbortSignal } = {}): Promise<ProcessInfo> {
    return this.processes.closeStdin(this.sessionId, processId, options);
  }

  signal(processId: string, signal: ProcessSignal, options: { signal?: AbortSignal } = {}): Promise<ProcessInfo> {
    return this.processes.signal(this.sessionId, processId, signal, options);
  }

  kill(processId: string, options: { signal?: AbortSignal } = {}): Promise<ProcessInfo> {
    return this.processes.kill(this.sessionId, processId, options);
  }
}
