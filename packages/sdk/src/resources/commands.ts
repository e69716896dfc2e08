/**
 * `session.commands`: E2B's `sandbox.commands` (`run`, `connect`, `list`, `kill`, `sendStdin`, and the `CommandHandle`
 * of a command in the background) over the session's background processes (`processes.ts`). Every command is a
 * background process on the server: `run` without `background` starts one and waits for its handle; a handle
 * follows the process's output with `Processes.output` (which resumes a broken stream), so a command outlives the
 * connection that watches it and can be re-attached with `connect`.
 *
 * Where E2B's names differ from the API's: `envs` is the API's `env`, `timeoutMs` its `timeout_seconds` (rounded
 * up), a command is named by its `processId` (`proc_…`; `pid` is its process id in the VM). A command that a signal
 * ended (killed, timed out) or whose VM went away has exit code -1, as E2B reports it.
 */
import { decodeBase64 } from '../base64.ts';
import { CommandExitError, NotFoundError, SandboxdError } from '../errors.ts';
import type { CallOptions } from '../call-options.ts';
import type { ProcessInfo, Processes } from './processes.ts';

/** How a command ended (E2B's `CommandResult`, with the ids of this API). */
export interface CommandResult {
  /** 0 when it succeeded; -1 when a signal ended it (`signal`) or its VM went away (`error`). */
  exitCode: number;
  /** All of its standard output (the newest 4 MiB of output are what the server keeps for a late reader). */
  stdout: string;
  stderr: string;
  /** Why it ended other than by exiting: `killed by SIGKILL`, `timed out after 5 s`, or the server's error. */
  error?: string;
  /** The signal that ended it (e.g. `SIGKILL`), when one did. */
  signal?: string;
  /** Its process id in the VM (null when it ended before it reported one). */
  pid: number | null;
  /** Its id in the API (`proc_…`): what `connect`, `kill` and `sendStdin` take. */
  processId: string;
}

/** Options of `session.commands.run` (E2B's names). */
export interface CommandStartOptions {
  /** Each piece of standard output as it arrives (decoded as UTF-8); a promise it returns is waited for before the next. */
  onStdout?: (data: string) => unknown;
  /** Each piece of standard error as it arrives. */
  onStderr?: (data: string) => unknown;
  /** Working directory in the VM (default: the user's home, /root for root); it must exist. */
  cwd?: string;
  /** Environment variables on top of the session's (the API's `env`). */
  envs?: Record<string, string>;
  /**
   * The account that runs it: `root` (sandboxd's default, as `execute` runs) or `user` (uid 1000, home /home/user,
   * E2B's default user; no sudo), or an account a template added.
   */
  user?: string;
  /**
   * Killed (its whole process group) after this many milliseconds, rounded up to whole seconds (at most 24 h).
   * Default, and 0: no limit of its own, it runs until the VM ends (E2B's default is 60 s).
   */
  timeoutMs?: number;
  /** Answer a {@link CommandHandle} as soon as the command runs, instead of waiting for its end. */
  background?: boolean;
  /** Keep its stdin open for `sendStdin`/`closeStdin` (default false: it reads /dev/null). */
  stdin?: boolean;
  /** Aborting kills the command in the VM; `run`, or the handle's `wait()`, then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** A label of yours, shown in lists. */
  tag?: string;
}

/** Options of `session.commands.connect`. */
export interface CommandConnectOptions {
  /** Each piece of standard output (the output kept so far first, then live); a promise it returns is waited for. */
  onStdout?: (data: string) => unknown;
  /** Each piece of standard error. */
  onStderr?: (data: string) => unknown;
  /** Aborting stops following the command (as `disconnect()` does; it goes on); `wait()` rejects with the reason. */
  signal?: AbortSignal;
}

interface FollowOptions {
  onStdout?: ((data: string) => unknown) | undefined;
  onStderr?: ((data: string) => unknown) | undefined;
  signal?: AbortSignal | undefined;
  /** What an aborted signal does: kill the process (`run`) or only stop following it (`connect`). */
  onAbort: 'kill' | 'disconnect';
}

/** The result of an ended process, with the output the handle collected. */
function resultOf(process: ProcessInfo, stdout: string, stderr: string): CommandResult {
  const ids = { pid: process.pid, processId: process.process_id };
  if (process.status === 'exited' && process.exit_code !== null) return { exitCode: process.exit_code, stdout, stderr, ...ids };
  const error =
    process.status === 'failed'
      ? (process.error ?? 'its VM or agent went away while it ran')
      : process.timed_out
        ? `timed out (killed by ${process.signal ?? 'a signal'})`
        : `killed by ${process.signal ?? 'a signal'}`;
  return { exitCode: -1, stdout, stderr, error, ...(process.signal ? { signal: process.signal } : {}), ...ids };
}

/** Kills a process; true when this call killed it, false when there was no such process or it had already ended. */
async function killProcess(processes: Processes, sessionId: string, processId: string, { signal }: CallOptions = {}): Promise<boolean> {
  try {
    // The server answers an ended process as it is: only its record tells whether it was running.
    if ((await processes.get(sessionId, processId, { signal })).status !== 'running') return false;
    const process = await processes.kill(sessionId, processId, { signal });
    // Still running: the kill was sent and the server stopped waiting for the end. Ended: by our SIGKILL, or by
    // itself in the moment between the two calls.
    return process.status === 'running' || process.signal === 'SIGKILL';
  } catch (error) {
    if (error instanceof NotFoundError) return false;
    throw error;
  }
}

/**
 * A command running in the VM, followed from this client (E2B's `CommandHandle`): its output so far, its end
 * (`wait`), and what can be done to it. Made by `session.commands.run(cmd, { background: true })` and
 * `session.commands.connect(processId)`. Its output is collected from the first byte the server kept. While it
 * follows the command it holds a connection open (Node.js does not exit meanwhile): `disconnect()` when the output no
 * longer matters, the command goes on.
 */
export class CommandHandle {
  /** Its id in the API (`proc_…`): for `commands.connect`, `commands.kill`, `session.processes.*`. */
  readonly processId: string;
  /** Its process id in the VM (null when it ended before it reported one). */
  readonly pid: number | null;
  private stdoutText = '';
  private stderrText = '';
  private result: CommandResult | undefined;
  /** Aborted to stop following (disconnect, or connect's signal); its reason is what `wait()` rejects with. */
  private readonly following = new AbortController();
  private readonly followed: Promise<CommandResult>;

  /** @internal Use `session.commands.run(…, { background: true })` or `session.commands.connect(…)`. */
  constructor(
    private readonly processes: Processes,
    private readonly sessionId: string,
    process: ProcessInfo,
    options: FollowOptions,
  ) {
    this.processId = process.process_id;
    this.pid = process.pid;
    this.followed = this.follow(options);
    // wait() reports a failure; a handle nobody waits for must not become an unhandled rejection.
    this.followed.catch(() => undefined);
  }

  /** Standard output so far. */
  get stdout(): string {
    return this.stdoutText;
  }

  /** Standard error so far. */
  get stderr(): string {
    return this.stderrText;
  }

  /** Its exit code once it ended (-1: a signal ended it), undefined while it runs. */
  get exitCode(): number | undefined {
    return this.result?.exitCode;
  }

  /** Why it ended other than by exiting (see {@link CommandResult.error}), once it ended. */
  get error(): string | undefined {
    return this.result?.error;
  }

  /**
   * Waits for its end: resolves its result when it exits 0, rejects with a {@link CommandExitError} (carrying the
   * result) otherwise — a killed command too (exit code -1, `signal: 'SIGKILL'`). After `disconnect()`, or when
   * following it failed, rejects with why.
   */
  async wait(): Promise<CommandResult> {
    const result = await this.followed;
    if (result.exitCode !== 0) throw new CommandExitError(result);
    return result;
  }

  /** Kills it (SIGKILL to its process group): true when it was killed, false when it had already ended. */
  kill(options: CallOptions = {}): Promise<boolean> {
    return killProcess(this.processes, this.sessionId, this.processId, options);
  }

  /** Writes to its stdin (started with `stdin: true`; a SandboxdError with status 409 otherwise, or once it ended). */
  async sendStdin(data: string | Uint8Array, options: CallOptions = {}): Promise<void> {
    await this.processes.sendStdin(this.sessionId, this.processId, data, { signal: options.signal });
  }

  /** Closes its stdin: it reads end of file. */
  async closeStdin(options: CallOptions = {}): Promise<void> {
    await this.processes.closeStdin(this.sessionId, this.processId, { signal: options.signal });
  }

  /**
   * Stops following it: the command goes on in the VM, no callback is called after this resolves (one in progress
   * is abandoned), and `wait()` rejects. `session.commands.connect(processId)` attaches to it again.
   */
  async disconnect(): Promise<void> {
    this.following.abort(
      new SandboxdError(`stopped following command ${this.processId} (disconnect); it goes on: commands.connect('${this.processId}') attaches again`),
    );
    await this.followed.catch(() => undefined);
  }

  private async follow(options: FollowOptions): Promise<CommandResult> {
    const { signal } = options;
    const onAbort = () => {
      if (options.onAbort === 'disconnect') this.following.abort(signal?.reason);
      // The output goes on until the process ends; a kill that fails leaves nothing to wait for.
      else void this.kill().catch(() => this.following.abort(signal?.reason));
    };
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    const stopped = new Promise<void>((resolve) => this.following.signal.addEventListener('abort', () => resolve(), { once: true }));
    const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
    let ended: ProcessInfo | undefined;
    try {
      // base64: bytes decoded here, so a resumed stream does not cut a character in two.
      for await (const event of this.processes.output(this.sessionId, this.processId, { encoding: 'base64', signal: this.following.signal })) {
        if ((event.type === 'stdout' || event.type === 'stderr') && event.data !== undefined) {
          const text = decoders[event.type].decode(decodeBase64(event.data), { stream: true });
          if (text) await this.deliver(event.type, text, options, stopped);
        } else if (event.type === 'exit' && event.process) ended = event.process;
        if (this.following.signal.aborted) break;
      }
      if (this.following.signal.aborted) throw this.following.signal.reason;
      for (const stream of ['stdout', 'stderr'] as const) {
        const rest = decoders[stream].decode();
        if (rest) await this.deliver(stream, rest, options, stopped);
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    // The run's signal was aborted: the process was killed, and has now ended.
    if (options.onAbort === 'kill' && signal?.aborted) throw signal.reason;
    ended ??= await this.processes.get(this.sessionId, this.processId);
    if (ended.status === 'running') throw new SandboxdError(`the output of command ${this.processId} ended while it still runs`);
    this.result = resultOf(ended, this.stdoutText, this.stderrText);
    return this.result;
  }

  /** Adds output and hands it to its callback, unless following stops first (the callback is then abandoned). */
  private async deliver(stream: 'stdout' | 'stderr', text: string, options: FollowOptions, stopped: Promise<void>): Promise<void> {
    if (stream === 'stdout') this.stdoutText += text;
    else this.stderrText += text;
    const callback = stream === 'stdout' ? options.onStdout : options.onStderr;
    const returned = callback?.(text);
    if (typeof (returned as PromiseLike<unknown> | undefined)?.then === 'function') await Promise.race([returned, stopped]);
  }
}

/**
 * A session's commands (`session.commands`), E2B's `sandbox.commands`: run a shell command and wait for it or keep
 * it in the background, attach to one again (from another client too), list, kill, feed its stdin.
 */
export class SessionCommands {
  /** @internal Use `session.commands`. */
  constructor(
    private readonly processes: Processes,
    private readonly sessionId: string,
  ) {}

  /**
   * Runs `cmd` (a bash command line) and waits for its end: resolves its result when it exits 0, rejects with a
   * {@link CommandExitError} carrying the result otherwise. `onStdout`/`onStderr` get output as it arrives; aborting
   * `signal` kills the command and rejects with the signal's reason. The first command of a session starts its VM.
   */
  run(cmd: string, options?: CommandStartOptions & { background?: false }): Promise<CommandResult>;
  /** Starts `cmd` and answers a {@link CommandHandle} as soon as it runs (`wait()` for its end). */
  run(cmd: string, options: CommandStartOptions & { background: true }): Promise<CommandHandle>;
  /** Either, as `background` says. */
  run(cmd: string, options?: CommandStartOptions): Promise<CommandResult | CommandHandle>;
  async run(cmd: string, options: CommandStartOptions = {}): Promise<CommandResult | CommandHandle> {
    const { signal, timeoutMs } = options;
    if (timeoutMs !== undefined && (!Number.isFinite(timeoutMs) || timeoutMs < 0))
      throw new RangeError(`timeoutMs must be a number of milliseconds ≥ 0, got ${timeoutMs}`);
    signal?.throwIfAborted();
    // Not tied to the signal: a start the server may already have acted on is killed, not left running unseen.
    const starting = this.processes.start(this.sessionId, cmd, {
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      ...(options.envs ? { env: options.envs } : {}),
      ...(options.user !== undefined ? { user: options.user } : {}),
      ...(timeoutMs ? { timeoutMs } : {}),
      stdin: options.stdin === true,
      ...(options.tag !== undefined ? { tag: options.tag } : {}),
    });
    const process = await (signal ? this.untilAborted(starting, signal) : starting);
    const handle = new CommandHandle(this.processes, this.sessionId, process, {
      onStdout: options.onStdout,
      onStderr: options.onStderr,
      signal,
      onAbort: 'kill',
    });
    return options.background ? handle : handle.wait();
  }

  /**
   * Attaches to a command that runs (or ended in the last 10 minutes), from this client or another: its output from
   * the oldest the server kept, then live. Aborting `signal` stops following it; the command goes on.
   * No such command: NotFoundError.
   */
  async connect(processId: string, options: CommandConnectOptions = {}): Promise<CommandHandle> {
    const process = await this.processes.get(this.sessionId, processId, options.signal ? { signal: options.signal } : {});
    return new CommandHandle(this.processes, this.sessionId, process, {
      onStdout: options.onStdout,
      onStderr: options.onStderr,
      signal: options.signal,
      onAbort: 'disconnect',
    });
  }

  /** The commands that run now, oldest first (those that ended lately too: `session.processes.list()`). */
  async list(options: { signal?: AbortSignal } = {}): Promise<ProcessInfo[]> {
    return (await this.processes.list(this.sessionId, options)).filter((process) => process.status === 'running');
  }

  /** Kills a command (SIGKILL to its process group): true when it was killed, false when there was none or it had ended. */
  kill(processId: string, options: CallOptions = {}): Promise<boolean> {
    return killProcess(this.processes, this.sessionId, processId, options);
  }

  /** Writes to the stdin of a command started with `stdin: true`. */
  async sendStdin(processId: string, data: string | Uint8Array, options: CallOptions = {}): Promise<void> {
    await this.processes.sendStdin(this.sessionId, processId, data, { signal: options.signal });
  }

  /** Closes a command's stdin: it reads end of file. */
  async closeStdin(processId: string, options: CallOptions = {}): Promise<void> {
    await this.processes.closeStdin(this.sessionId, processId, { signal: options.signal });
  }

  /** `starting`, or the signal's reason as soon as it aborts, in which case what started is killed once it has. */
  private untilAborted(starting: Promise<ProcessInfo>, signal: AbortSignal): Promise<ProcessInfo> {
    return new Promise<ProcessInfo>((resolve, reject) => {
      const onAbort = () => {
        reject(signal.reason);
        starting.then((process) => this.processes.kill(this.sessionId, process.process_id)).catch(() => undefined);
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      starting.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }
}
