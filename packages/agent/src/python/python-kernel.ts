/**
 * One persistent Python interpreter (`kernel.py`, which describes its channel): runs cells one at a time,
 * collects their output, interrupts a cell at its deadline (SIGINT → KeyboardInterrupt, state kept) and kills the
 * interpreter only if the interrupt is ignored.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import type { PythonError, PythonRichResult, PythonRunResult } from '../protocol/messages.ts';
import type { UserCgroup } from '../exec/user-cgroups.ts';
import { startUserProgram } from '../exec/user-program.ts';
import { parseMeminfo } from '../system/proc-stats.ts';
import { JsonPipeChannel } from './json-pipe-channel.ts';
import KERNEL_SOURCE from './kernel.py';
import { MarkedOutput } from './marked-output.ts';

/** How to start and drive a kernel. */
export interface PythonKernelOptions {
  /** The interpreter, e.g. `python3`. */
  pythonCommand: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** After an interrupt, how long the cell may take to stop before the interpreter is killed. */
  interruptGraceMs: number;
  /** How long to wait for a run's output end markers after its result (user code may have closed fd 1). */
  markerWaitMs: number;
  /** A cgroup for each interpreter (limits, a reliable kill, and telling an out-of-memory kill from others). */
  newCgroup?: () => UserCgroup | null;
}

/** Nice value of a spare interpreter starting in the background. */
const BACKGROUND_NICE = 19;

type KernelMessage =
  | { type: 'ready'; pid: number }
  | {
      type: 'result';
      seq: number;
      result: string | null;
      results: PythonRichResult[];
      error: PythonError | null;
      executionCount: number;
      cpuMs: number;
    }
  | { type: 'reseeded'; seq: number };

type KernelRequest = { type: 'run'; seq: number; code: string; scratch?: boolean; cwd?: string } | { type: 'reseed'; seq: number };

/** How one run is made. */
export interface KernelRunOptions {
  timeoutMs?: number;
  /** Interrupts the cell (or skips it while it waits in the queue). */
  signal?: AbortSignal;
  /** A namespace of its own, dropped afterwards and not counted: the interpreter's state stays as it was. */
  scratch?: boolean;
  /** Change to this directory first (a context's first run). */
  cwd?: string;
  /** The run's output as it arrives (a streamed run); the result still carries all of it. */
  onStdout?: (bytes: Buffer) => void;
  onStderr?: (bytes: Buffer) => void;
}

/** A running interpreter. */
export class PythonKernel {
  /** Resolves when the interpreter is up; rejects if it could not start. */
  readonly ready: Promise<void>;
  private readonly child: ChildProcess;
  private readonly channel: JsonPipeChannel<KernelMessage, KernelRequest>;
  private readonly stdout = new MarkedOutput();
  private readonly stderr = new MarkedOutput();
  private readonly replies = new Map<number, (message: KernelMessage) => void>();
  private readonly exited: Promise<string>;
  private seq = 0;
  private tail: Promise<unknown> = Promise.resolve();
  private dead = false;
  private readonly cgroup: UserCgroup | null;

  constructor(private readonly options: PythonKernelOptions) {
    this.cgroup = options.newCgroup?.() ?? null;
    // User code runs here: the guest's OOM killer may pick it (the agent it may not).
    const child = startUserProgram(
      () =>
        spawn(options.pythonCommand, ['-u', '-c', KERNEL_SOURCE], {
          cwd: options.cwd,
          env: options.env,
          // Its own process group, so killing a stuck kernel also ends the processes its code started.
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'],
        }),
      this.cgroup,
    );
    this.child = child;
    child.stdout?.on('data', (chunk: Buffer) => this.stdout.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => this.stderr.push(chunk));
    let markReady: () => void = () => undefined;
    let failStart: (error: Error) => void = () => undefined;
    this.ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failStart = reject;
    });
    this.ready.catch(() => undefined);
    this.exited = new Promise<string>((resolve) => {
      child.once('error', (error) => {
        this.dead = true;
        void this.cgroup?.release();
        failStart(new Error(`cannot start ${options.pythonCommand}: ${error.message}`));
        resolve(error.message);
      });
      child.once('exit', (code, signal) => {
        const killedByAgent = this.dead;
        this.dead = true;
        const how = this.describeExit(code, signal, killedByAgent);
        void this.cgroup?.release();
        failStart(new Error(`the Python interpreter ${how} while starting`));
        resolve(how);
      });
    });
    this.channel = new JsonPipeChannel<KernelMessage, KernelRequest>(
      child.stdio[4] as Readable,
      child.stdio[3] as Writable,
      (message) => {
        if (message.type === 'ready') markReady();
        else this.replies.get(message.seq)?.(message);
      },
      () => this.kill(),
    );
  }

  /**
   * Lowers the interpreter's CPU priority (nice 19) while it waits as a spare, or restores it before it runs
   * code. Only as root: an unprivileged agent could not raise it back, so it leaves the priority alone.
   */
  setBackground(background: boolean): void {
    if (process.getuid?.() !== 0 || this.child.pid === undefined || this.dead) return;
    try {
      setPriority(this.child.pid, background ? BACKGROUND_NICE : 0);
    } catch {
      // Exited meanwhile; the run reports that.
    }
  }

  /** False once the interpreter exited or was killed. */
  get alive(): boolean {
    return !this.dead;
  }

  /** Runs a cell after those queued before it. Never rejects once `ready` resolved. */
  run(code: string, options: KernelRunOptions = {}): Promise<PythonRunResult> {
    return this.enqueue(() => this.runNow(code, options));
  }

  /** Reseeds the interpreter's random state (after a snapshot restore), after the cells queued before. */
  reseed(): Promise<void> {
    return this.enqueue(async () => {
      await this.ready;
      if (this.dead) return;
      const seq = ++this.seq;
      const reply = this.awaitReply(seq);
      this.channel.send({ type: 'reseed', seq });
      await Promise.race([reply, this.exited]);
    });
  }

  /** Kills the interpreter and everything it started. */
  kill(): void {
    if (this.dead) return;
    this.dead = true;
    try {
      process.kill(-(this.child.pid ?? 0), 'SIGKILL');
    } catch {
      this.child.kill('SIGKILL');
    }
    // Also what left its process group (setsid, daemons).
    void this.cgroup?.kill();
  }

  /**
   * How the interpreter ended, for the error of the run it took with it. A SIGKILL the agent did not send, in a
   * group whose memory events count an out-of-memory kill, is the guest's OOM killer.
   */
  private describeExit(code: number | null, signal: NodeJS.Signals | null, killedByAgent: boolean): string {
    if (signal === 'SIGKILL' && !killedByAgent && (this.cgroup?.oomKills() ?? 0) > 0) {
      let memory = '';
      try {
        memory = ` (${Math.round(parseMeminfo(readFileSync('/proc/meminfo', 'utf8')).totalBytes / 1048576)} MiB)`;
      } catch {
        // Only a detail of the message.
      }
      return `was killed by the out-of-memory killer: the code used more memory than the VM has${memory}`;
    }
    return signal ? `was killed by ${signal}` : `exited with status ${code}`;
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const next = this.tail.then(task, task);
    this.tail = next.catch(() => undefined);
    return next;
  }

  private awaitReply(seq: number): Promise<KernelMessage> {
    return new Promise((resolve) => {
      this.replies.set(seq, (message) => {
        this.replies.delete(seq);
        resolve(message);
      });
    });
  }

  private async runNow(code: string, { timeoutMs, signal, scratch = false, cwd, onStdout, onStderr }: KernelRunOptions): Promise<PythonRunResult> {
    await this.ready;
    const started = performance.now();
    if (signal?.aborted) return failedRun('Cancelled', 'the host cancelled the run before it started', false, started);
    const seq = ++this.seq;
    this.stdout.begin(seq, onStdout);
    this.stderr.begin(seq, onStderr);
    const reply = this.awaitReply(seq);
    let timedOut = false;
    let escalation: NodeJS.Timeout | undefined;
    const deadline =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            this.child.kill('SIGINT');
            escalation = setTimeout(() => this.kill(), this.options.interruptGraceMs);
          }, timeoutMs);
    if (!this.dead) this.channel.send({ type: 'run', seq, code, ...(scratch ? { scratch } : {}), ...(cwd ? { cwd } : {}) });
    const interrupt = (): void => {
      this.child.kill('SIGINT');
    };
    signal?.addEventListener('abort', interrupt);
    const outcome = await Promise.race([reply, this.exited.then((how) => ({ type: 'died' as const, how }))]);
    signal?.removeEventListener('abort', interrupt);
    clearTimeout(deadline);
    clearTimeout(escalation);
    const markerWaitMs = outcome.type === 'result' ? this.options.markerWaitMs : 0;
    const [stdout, stderr] = await Promise.all([this.stdout.finish(markerWaitMs), this.stderr.finish(markerWaitMs)]);
    const durationMs = performance.now() - started;
    if (outcome.type !== 'result') {
      this.replies.delete(seq);
      const how = outcome.type === 'died' ? outcome.how : 'stopped answering';
      const value = `the Python interpreter ${how}; its state (variables, imports) is lost and the next run starts a new interpreter`;
      return { ...failedRun('KernelDied', value, true, started), stdout, stderr, timedOut };
    }
    return {
      stdout,
      stderr,
      result: outcome.result,
      results: outcome.results ?? [],
      error: outcome.error,
      timedOut,
      kernelRestarted: false,
      executionCount: outcome.executionCount,
      durationMs,
      cpuMs: outcome.cpuMs,
    };
  }
}

/**
 * A run that produced no result from the interpreter. Its traceback is the error line Python would print, so
 * whoever shows tracebacks (the host's execution record does, on stderr) shows what happened.
 */
function failedRun(name: string, value: string, kernelRestarted: boolean, started: number): PythonRunResult {
  return {
    stdout: '',
    stderr: '',
    result: null,
    results: [],
    error: { name, value, traceback: `${name}: ${value}\n` },
    timedOut: false,
    kernelRestarted,
    executionCount: 0,
    durationMs: performance.now() - started,
    cpuMs: null,
  };
}
