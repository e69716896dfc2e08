/**
 * Background processes in a session's VM: started with their own command, working directory, environment and
 * deadline, listed, re-attached to (their output from where the reader left off, `process-output.ts`), fed stdin,
 * sent signals and killed, while the VM and its other runs go on. Each is one streamed exec through the VM's agent
 * (stdout and stderr apart, stdin and signals on the same stream), held by the node that started it: its record and
 * output live in this process's memory (the newest `OUTPUT_LIMIT_BYTES` of output, ended processes for
 * `ENDED_KEPT_MS`). A restart of the server ends the exec streams, and with them the processes.
 */
import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { Principal } from './authenticator.ts';
import type { Clock } from './clock.ts';
import { AppError } from './errors.ts';
import { ProcessOutput } from './process-output.ts';
import type { SessionService } from './sessions.ts';
import { ExecSignals, type SendableSignal } from './vm-engine.ts';
import type { VmService } from './vms/index.ts';

/** Output kept per process for re-attaching (the newest bytes). */
export const OUTPUT_LIMIT_BYTES = 4 * 1024 * 1024;
/** How long an ended process can still be read (its exit and the output kept). */
export const ENDED_KEPT_MS = 10 * 60_000;
/** Processes running at once in one session. */
export const MAX_RUNNING_PER_SESSION = 32;
/** A process without a timeout of its own runs until its VM ends, or this long. */
const DEFAULT_TIMEOUT_SECONDS = 24 * 3600;
/** The working directory when none is given (root's home, as for executions; another user's home for them). */
const DEFAULT_CWD = '/root';
/** Who runs a process when the request names nobody (as executions run). */
const DEFAULT_USER = 'root';
/** How long a start waits for the program to run before answering an error. */
const START_TIMEOUT_MS = 60_000;

export interface ProcessSpec {
  /** A shell command line, run by `/bin/bash -c`. Exactly one of `command` and `argv`. */
  command?: string | undefined;
  /** A program and its arguments, run directly. */
  argv?: string[] | undefined;
  cwd?: string | undefined;
  /** Added to the session's environment (and overriding it). */
  env?: Record<string, string> | undefined;
  timeoutSeconds?: number | undefined;
  /** Keep stdin open for `writeStdin`; otherwise the program reads /dev/null. */
  stdin?: boolean | undefined;
  /** A label of the caller's, shown in lists. */
  tag?: string | undefined;
  /** The account of the VM it runs as (default root); its home is the default `cwd`. */
  user?: string | undefined;
}

export type ProcessStatus = 'running' | 'exited' | 'failed';

/** A process as the API shows it. */
export interface ProcessView {
  process_id: string;
  session_id: string;
  vm_id: string;
  pid: number | null;
  tag: string | null;
  command: string | null;
  argv: string[] | null;
  cwd: string;
  user: string;
  stdin: boolean;
  status: ProcessStatus;
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  error: string | null;
  started_at: string;
  ended_at: string | null;
  /** Number of the newest output event (a reader passes it as `after` to get only what follows). */
  output_seq: number;
}

interface BackgroundProcess {
  view: ProcessView;
  userId: number;
  output: ProcessOutput;
  stdin: PassThrough | null;
  signals: ExecSignals;
  /** When an ended process is forgotten. */
  forgetAt: number;
}

export class ProcessService {
  private readonly processes = new Map<string, BackgroundProcess>();

  constructor(
    private readonly sessions: SessionService,
    private readonly vms: VmService,
    private readonly clock: Clock,
  ) {}

  /**
   * Starts a program in the session's VM (started first when the session has none) and answers once it runs; a
   * program that cannot start (a missing working directory or program) is a BAD_REQUEST and leaves no record.
   */
  async start(principal: Principal, sessionId: string, spec: ProcessSpec): Promise<ProcessView> {
    const session = await this.sessions.getOwned(principal, sessionId);
    if ((spec.command === undefined) === (spec.argv === undefined)) throw new AppError('BAD_REQUEST', 'give exactly one of command and argv');
    if (spec.argv?.length === 0) throw new AppError('BAD_REQUEST', 'argv names at least the program');
    if (spec.cwd !== undefined && !spec.cwd.startsWith('/')) throw new AppError('BAD_REQUEST', 'cwd must be an absolute path');
    this.forgetEnded();
    const running = [...this.processes.values()].filter((p) => p.view.session_id === sessionId && p.view.status === 'running').length;
    if (running >= MAX_RUNNING_PER_SESSION)
      throw new AppError('QUOTA_EXCEEDED', `session ${sessionId} already runs ${running} processes (at most ${MAX_RUNNING_PER_SESSION})`);

    const { vm, agent } = await this.vms.ensureVm(principal, session);
    const processId = `proc_${randomBytes(8).toString('hex')}`;
    const user = spec.user ?? DEFAULT_USER;
    // Another user's home is /home/NAME, as useradd makes it (the image's `user` has it); a template whose users
    // live elsewhere passes cwd.
    const cwd = spec.cwd ?? (user === DEFAULT_USER ? DEFAULT_CWD : `/home/${user}`);
    const process: BackgroundProcess = {
      view: {
        process_id: processId,
        session_id: sessionId,
        vm_id: vm.id,
        pid: null,
        tag: spec.tag ?? null,
        command: spec.command ?? null,
        argv: spec.argv ?? null,
        cwd,
        user,
        stdin: spec.stdin === true,
        status: 'running',
        exit_code: null,
        signal: null,
        timed_out: false,
        error: null,
        started_at: this.clock.now().toISOString(),
        ended_at: null,
        output_seq: 0,
      },
      userId: principal.userId,
      output: new ProcessOutput(OUTPUT_LIMIT_BYTES),
      stdin: spec.stdin ? new PassThrough() : null,
      signals: new ExecSignals(),
      forgetAt: Infinity,
    };
    let started: (pid: number) => void = () => undefined;
    const running$ = new Promise<number>((resolve) => (started = resolve));
    const program = spec.argv ? { argv: spec.argv } : { command: spec.command!, shell: ['/bin/bash', '-c'] };
    const run = agent.exec(
      {
        ...program,
        env: { ...session.env, ...spec.env },
        cwd,
        timeoutMs: (spec.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000,
        ...(user === DEFAULT_USER ? {} : { user }),
      },
      {
        onStdout: (chunk) => process.output.push('stdout', chunk),
        onStderr: (chunk) => process.output.push('stderr', chunk),
        onStarted: (pid) => started(pid),
      },
      undefined,
      process.stdin ?? undefined,
      process.signals,
    );
    const outcome = await Promise.race([
      running$.then((pid) => ({ pid })),
      run.then(
        () => ({ pid: null }),
        (error: unknown) => ({ error }),
      ),
      new Promise<{ timeout: true }>((resolve) => setTimeout(() => resolve({ timeout: true }), START_TIMEOUT_MS).unref()),
    ]);
    if ('error' in outcome) throw outcome.error;
    if ('timeout' in outcome) {
      process.signals.send('SIGKILL');
      throw new AppError('VM_UNAVAILABLE', `the program did not start within ${START_TIMEOUT_MS / 1000} s`);
    }
    process.view.pid = outcome.pid;
    this.processes.set(processId, process);
    run.then(
      (result) => this.ended(process, { exit_code: result.exitCode, signal: result.signal, timed_out: result.timedOut, status: 'exited' }),
      (error: unknown) => this.ended(process, { status: 'failed', error: error instanceof Error ? error.message : String(error) }),
    );
    return this.viewOf(process);
  }

  /** The session's processes (running, and ended ones still kept), oldest first. */
  async list(principal: Principal, sessionId: string): Promise<ProcessView[]> {
    await this.sessions.getOwned(principal, sessionId);
    this.forgetEnded();
    return [...this.processes.values()].filter((p) => p.view.session_id === sessionId && p.userId === principal.userId).map((p) => this.viewOf(p));
  }

  async get(principal: Principal, sessionId: string, processId: string): Promise<ProcessView> {
    return this.viewOf(await this.find(principal, sessionId, processId));
  }

  /** The process and its output, for a reader (the route streams `output.read`). */
  async attach(principal: Principal, sessionId: string, processId: string): Promise<{ view: ProcessView; output: ProcessOutput }> {
    const process = await this.find(principal, sessionId, processId);
    return { view: this.viewOf(process), output: process.output };
  }

  /** Writes to the program's stdin (`eof`: then closes it). CONFLICT when it was started without stdin or closed it. */
  async writeStdin(principal: Principal, sessionId: string, processId: string, data: Buffer, eof: boolean): Promise<ProcessView> {
    const process = await this.find(principal, sessionId, processId);
    const stdin = process.stdin;
    if (!stdin) throw new AppError('CONFLICT', `process ${processId} was started without stdin (start it with stdin: true)`);
    if (stdin.writableEnded) throw new AppError('CONFLICT', `the stdin of process ${processId} is closed`);
    if (process.view.status !== 'running') throw new AppError('CONFLICT', `process ${processId} has ended`);
    if (data.length > 0 && !stdin.write(data)) await new Promise((resolve) => stdin.once('drain', resolve));
    if (eof) stdin.end();
    return this.viewOf(process);
  }

  /** Sends a signal to the program's process group. CONFLICT when it has ended. */
  async signal(principal: Principal, sessionId: string, processId: string, signal: SendableSignal): Promise<ProcessView> {
    const process = await this.find(principal, sessionId, processId);
    if (process.view.status !== 'running') throw new AppError('CONFLICT', `process ${processId} has ended`);
    process.signals.send(signal);
    return this.viewOf(process);
  }

  /** Kills the program's process group (SIGKILL) and answers once it ended; an ended process answers as it is. */
  async kill(principal: Principal, sessionId: string, processId: string): Promise<ProcessView> {
    const process = await this.find(principal, sessionId, processId);
    if (process.view.status === 'running') {
      process.signals.send('SIGKILL');
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), 10_000);
      for await (const item of process.output.read(process.output.seq, { follow: true, signal: controller.signal })) if (item.kind === 'end') break;
      clearTimeout(timer);
    }
    return this.viewOf(process);
  }

  private async find(principal: Principal, sessionId: string, processId: string): Promise<BackgroundProcess> {
    await this.sessions.getOwned(principal, sessionId);
    const process = this.processes.get(processId);
    if (!process || process.view.session_id !== sessionId || process.userId !== principal.userId)
      throw new AppError('NOT_FOUND', `no process ${processId} in session ${sessionId}`);
    return process;
  }

  private ended(process: BackgroundProcess, how: Partial<ProcessView> & { status: ProcessStatus }): void {
    Object.assign(process.view, how, { ended_at: this.clock.now().toISOString() });
    process.forgetAt = Date.now() + ENDED_KEPT_MS;
    process.stdin?.destroy();
    process.output.end();
  }

  private forgetEnded(): void {
    const now = Date.now();
    for (const [id, process] of this.processes) if (process.forgetAt <= now) this.processes.delete(id);
  }

  private viewOf(process: BackgroundProcess): ProcessView {
    return { ...process.view, output_seq: process.output.seq };
  }
}
