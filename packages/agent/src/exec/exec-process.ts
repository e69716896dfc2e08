/**
 * One executed process: spawn in its own process group (and cgroup when available), forward output as it
 * arrives, enforce the deadline, and report how it ended with its CPU time.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import type { Readable } from 'node:stream';
import type { ExecCpuTime, ExecResult } from '../protocol/messages.ts';
import type { UserCgroup } from './user-cgroups.ts';
import { AgentFailure } from '../http/agent-failure.ts';
import { startUserProgram } from './user-program.ts';

/** What to run and where output goes. */
export interface ExecProcessOptions {
  /** Absolute program path and arguments. */
  argv: string[];
  env: Record<string, string | undefined>;
  cwd: string;
  timeoutMs?: number;
  /** Keep stdin open for {@link ExecProcess.writeStdin}; otherwise it is /dev/null. */
  stdin: boolean;
  cgroup: UserCgroup | null;
  /** Another account's ids to run as (the agent is root); absent: the agent's own. */
  uid?: number;
  gid?: number;
  onStdout(chunk: Buffer): void;
  onStderr(chunk: Buffer): void;
  /**
   * After the process exits, how long to keep forwarding output from processes that still hold its stdout or
   * stderr (background jobs). After that their output is read and dropped, so they can keep running.
   */
  stdioGraceMs?: number;
}

/**
 * After the process exited, the most output still forwarded while the host reads slowly. What the process itself
 * wrote before it ended is at most what its pipes held (`/proc/sys/fs/pipe-max-size`, 1 MiB each, by default);
 * anything beyond comes from processes it left behind (a fork bomb's error messages, say), and waiting for the
 * host to take all of that would tie the execution's end to theirs.
 */
const AFTER_EXIT_OUTPUT_BYTES = 2 * 1024 * 1024;

/** A running execution. */
export class ExecProcess {
  /** Resolves once the process exited and its output was forwarded; rejects only when it could not start. */
  readonly result: Promise<ExecResult>;
  private readonly child: ChildProcess;
  private readonly startedAt = performance.now();
  private timedOut = false;
  private exited = false;
  private bytesAfterExit = 0;
  private deadline: NodeJS.Timeout | undefined;

  /**
   * Spawns `options.argv`, or, with `started`, takes on a process started for it already (a spare shell,
   * spare-shells.ts: spawned as this would have, in `options.cgroup`; `cpuBefore` is what it used before the
   * command, which is not the command's).
   */
  constructor(
    private readonly options: ExecProcessOptions,
    private readonly started?: { child: ChildProcess; cpuBefore: ExecCpuTime | null },
  ) {
    const [program, ...args] = options.argv as [string, ...string[]];
    const { cgroup } = options;
    const child = started?.child ?? startUserProgram(() => spawn(program, args, this.spawnOptions()), cgroup);
    this.child = child;
    // A spare's stdin is a pipe; a command without stdin reads end-of-file from it at once, as from /dev/null.
    if (started && !options.stdin) child.stdin?.end();
    child.stdin?.on('error', () => undefined); // EPIPE when the process closed its stdin early
    this.result = this.run();
    if (options.timeoutMs !== undefined) {
      this.deadline = setTimeout(() => {
        this.timedOut = true;
        this.killAll();
      }, options.timeoutMs);
    }
  }

  /** The process id (also its process group id). */
  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** Writes to the process's stdin; returns false under backpressure (see `stdinDrain`). */
  writeStdin(chunk: Buffer): boolean {
    const stdin = this.child.stdin;
    if (!stdin || stdin.destroyed || stdin.writableEnded) return true;
    return stdin.write(chunk);
  }

  /** Resolves when stdin can take more. */
  async stdinDrain(): Promise<void> {
    const stdin = this.child.stdin;
    if (!stdin || stdin.destroyed || !stdin.writableNeedDrain) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        stdin.off('drain', done);
        stdin.off('close', done);
        resolve();
      };
      stdin.on('drain', done);
      stdin.on('close', done);
    });
  }

  /** Closes the process's stdin. */
  endStdin(): void {
    this.child.stdin?.end();
  }

  /** Sends a signal to the whole process group. Throws on an unknown signal name. */
  signal(name: string): void {
    if (!(name in osConstants.signals)) throw new RangeError(`unknown signal ${name}`);
    this.signalGroup(name as NodeJS.Signals);
  }

  /** Kills the group and the cgroup (the host gave up on this execution). */
  abort(): void {
    this.killAll();
  }

  /** Backpressure from the host: stop reading the output pipes. */
  pauseOutput(): void {
    this.child.stdout?.pause();
    this.child.stderr?.pause();
  }

  resumeOutput(): void {
    this.child.stdout?.resume();
    this.child.stderr?.resume();
  }

  private spawnOptions() {
    return {
      cwd: this.options.cwd,
      env: this.options.env,
      ...(this.options.uid !== undefined ? { uid: this.options.uid } : {}),
      ...(this.options.gid !== undefined ? { gid: this.options.gid } : {}),
      // A new session and process group: the deadline kills everything the command started, not the agent.
      detached: true,
      stdio: [this.options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] as ['pipe' | 'ignore', 'pipe', 'pipe'],
    };
  }

  private async run(): Promise<ExecResult> {
    const child = this.child;
    const stdoutDone = this.forward(child.stdout, this.options.onStdout);
    const stderrDone = this.forward(child.stderr, this.options.onStderr);
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
      // A fork that failed (EAGAIN: the VM's process limit) has no exit to report: the execution fails.
      child.once('error', (error) => reject(new AgentFailure('UNAVAILABLE', `cannot start ${this.options.argv[0]}: ${error.message}`)));
      child.once('exit', (code, signal) => resolve({ code, signal }));
    }).catch((error: unknown) => {
      if (this.deadline) clearTimeout(this.deadline);
      void this.options.cgroup?.release();
      throw error;
    });
    this.exited = true;
    const durationMs = performance.now() - this.startedAt;
    if (this.deadline) clearTimeout(this.deadline);
    await this.drainOutput([stdoutDone, stderrDone]);
    const cpu = cpuSince(this.options.cgroup?.readCpu() ?? null, this.started?.cpuBefore ?? null);
    // The group goes after the answer: its removal is no part of how the execution ended.
    void this.options.cgroup?.release();
    return { exitCode: exit.code, signal: exit.signal, timedOut: this.timedOut, durationMs, cpu };
  }

  private forward(pipe: Readable | null, sink: (chunk: Buffer) => void): Promise<void> {
    if (!pipe) return Promise.resolve();
    return new Promise((resolve) => {
      pipe.on('data', (chunk: Buffer) => {
        if (this.exited) this.bytesAfterExit += chunk.length;
        sink(chunk);
      });
      pipe.once('close', resolve);
      pipe.on('error', () => undefined);
    });
  }

  /** Waits for the output pipes to close, for at most the grace period unless the host is still reading. */
  private async drainOutput(closed: Promise<void>[]): Promise<void> {
    const all = Promise.all(closed);
    const graceMs = this.options.stdioGraceMs ?? 100;
    for (;;) {
      const finished = await Promise.race([all.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), graceMs))]);
      if (finished) return;
      // Paused pipes mean the host is slow, not that a background job holds them: keep waiting, for as much as the
      // process itself can have left in its pipes.
      const paused = this.child.stdout?.isPaused() || this.child.stderr?.isPaused();
      if (paused && this.bytesAfterExit < AFTER_EXIT_OUTPUT_BYTES) continue;
      for (const pipe of [this.child.stdout, this.child.stderr]) {
        pipe?.removeAllListeners('data');
        pipe?.resume();
      }
      return;
    }
  }

  private killAll(): void {
    this.signalGroup('SIGKILL');
    void this.options.cgroup?.kill();
  }

  private signalGroup(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // ESRCH: the group is gone already. Fall back to the process itself while it has not been reaped.
      if (!this.exited) this.child.kill(signal);
    }
  }
}

/** CPU time used between two readings of a cgroup's counters (the whole reading when there is no earlier one). */
function cpuSince(now: ExecCpuTime | null, before: ExecCpuTime | null): ExecCpuTime | null {
  if (!now || !before) return now;
  return { userMs: now.userMs - before.userMs, systemMs: now.systemMs - before.systemMs, totalMs: now.totalMs - before.totalMs };
}
