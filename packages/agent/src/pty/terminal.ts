/**
 * One terminal: a program on a pseudo-terminal owned by a PTY relay process (`relay.py`), the output it
 * keeps for re-attaching (scrollback), and the host streams attached to it. A terminal outlives its
 * attachments: closing every stream leaves the program running, and a new attachment first gets the scrollback.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { UserCgroup } from '../exec/user-cgroups.ts';
import { startUserProgram } from '../exec/user-program.ts';
import type { PtyExit, PtyInfo } from '../protocol/messages.ts';
import { JsonPipeChannel } from '../python/json-pipe-channel.ts';
import RELAY_SOURCE from './relay.py';
import { Scrollback } from './scrollback.ts';

/** How to start a terminal. */
export interface TerminalOptions {
  id: string;
  pythonCommand: string;
  /** The program's resolved path first, then its arguments. */
  argv: string[];
  /** What the host asked to run (shown in listings). */
  command: string[];
  cols: number;
  rows: number;
  env: NodeJS.ProcessEnv;
  cwd: string;
  scrollbackBytes: number;
  /** The terminal's cgroup (relay, program and all it starts), or null. */
  cgroup: UserCgroup | null;
}

/** Someone attached to a terminal's output. */
export interface TerminalListener {
  onOutput(chunk: Buffer): void;
  onExit(exit: PtyExit): void;
}

type RelayStatus = { type: 'started'; pid: number } | ({ type: 'exit' } & PtyExit);

/** The relay's own diagnostics kept for an error message (it prints nothing unless something is wrong). */
const RELAY_STDERR_BYTES = 4096;

export class Terminal {
  readonly createdAt = new Date();
  /** How the program ended; null while it runs. */
  exit: PtyExit | null = null;
  exitedAt: Date | null = null;
  /** Resolves once the program ended (or the relay died). */
  readonly ended: Promise<PtyExit>;
  private cols: number;
  private rows: number;
  private pid = 0;
  private readonly relay: ChildProcess;
  private readonly control: JsonPipeChannel<RelayStatus, { type: 'resize'; cols: number; rows: number }>;
  private readonly scrollback: Scrollback;
  private readonly listeners = new Set<TerminalListener>();
  private relayStderr = '';

  private constructor(
    private readonly options: TerminalOptions,
    started: (pid: number) => void,
    failed: (error: Error) => void,
  ) {
    this.cols = options.cols;
    this.rows = options.rows;
    this.scrollback = new Scrollback(options.scrollbackBytes);
    // -I: the user's PYTHON* variables (meant for their programs) must not change how the relay runs.
    this.relay = startUserProgram(
      () =>
        spawn(options.pythonCommand, ['-I', '-c', RELAY_SOURCE, String(options.cols), String(options.rows), options.cwd, ...options.argv], {
          cwd: options.cwd,
          env: options.env,
          stdio: ['pipe', 'pipe', 'pipe', 'pipe', 'pipe'],
        }),
      options.cgroup,
    );
    const relay = this.relay;
    relay.stdin?.on('error', () => undefined); // EPIPE after the relay ended; its exit is reported below
    relay.stdout?.on('data', (chunk: Buffer) => {
      this.scrollback.push(chunk);
      for (const listener of this.listeners) listener.onOutput(chunk);
    });
    relay.stderr?.on('data', (chunk: Buffer) => {
      this.relayStderr = (this.relayStderr + chunk.toString('utf8')).slice(-RELAY_STDERR_BYTES);
    });
    let reported: PtyExit | null = null;
    this.control = new JsonPipeChannel<RelayStatus, { type: 'resize'; cols: number; rows: number }>(
      relay.stdio[4] as Readable,
      relay.stdio[3] as Writable,
      (message) => {
        if (message.type === 'started') {
          this.pid = message.pid;
          started(message.pid);
        } else if (message.type === 'exit') {
          reported = { exitCode: message.exitCode, signal: message.signal };
        }
      },
      () => relay.kill('SIGKILL'),
    );
    this.ended = new Promise<PtyExit>((resolve) => {
      relay.once('error', (error) => failed(new Error(`cannot start the PTY relay (${options.pythonCommand}): ${error.message}`)));
      // 'close', not 'exit': the output pipe is drained by then, so no output arrives after the exit.
      relay.once('close', (code, signal) => {
        void options.cgroup?.release();
        const exit = reported ?? { exitCode: null, signal: signal ?? (code === 0 ? null : 'SIGKILL') };
        failed(new Error(`the PTY relay ended before the program started: ${this.relayStderr.trim() || `status ${code ?? signal}`}`));
        this.exit = exit;
        this.exitedAt = new Date();
        for (const listener of this.listeners) listener.onExit(exit);
        this.listeners.clear();
        resolve(exit);
      });
    });
  }

  /** Starts the program; resolves once it runs on its terminal. */
  static start(options: TerminalOptions): Promise<Terminal> {
    return new Promise<Terminal>((resolve, reject) => {
      // The callbacks run from the relay's events, after the constructor returned.
      const terminal: Terminal = new Terminal(options, () => resolve(terminal), reject);
    });
  }

  get id(): string {
    return this.options.id;
  }

  get attachments(): number {
    return this.listeners.size;
  }

  /** Input for the program, as if typed. False when the relay should be given time (see {@link inputDrained}). */
  write(data: Buffer): boolean {
    if (this.exit || !this.relay.stdin || this.relay.stdin.destroyed) return true;
    return this.relay.stdin.write(data);
  }

  /** Resolves when the relay took the input written so far (or ended). */
  inputDrained(): Promise<void> {
    const stdin = this.relay.stdin;
    if (!stdin || stdin.destroyed || !stdin.writableNeedDrain) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = (): void => {
        stdin.off('drain', done);
        stdin.off('close', done);
        resolve();
      };
      stdin.on('drain', done);
      stdin.on('close', done);
    });
  }

  /** Changes the terminal's size; the program gets SIGWINCH. */
  resize(cols: number, rows: number): void {
    this.cols = cols;
    this.rows = rows;
    if (!this.exit) this.control.send({ type: 'resize', cols, rows });
  }

  /**
   * Attaches a listener: it gets the scrollback at once, then live output, then the exit (at once when the
   * program already ended). Returns the detach function.
   */
  attach(listener: TerminalListener): () => void {
    const past = this.scrollback.contents();
    if (past.length > 0) listener.onOutput(past);
    if (this.exit) {
      listener.onExit(this.exit);
      return () => undefined;
    }
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /**
   * Ends the program: SIGHUP to its process group (what closing a terminal window does), SIGKILL to the
   * group and the relay after `graceMs`. Resolves with how it ended.
   */
  async kill(graceMs: number): Promise<PtyExit> {
    if (this.exit) return this.exit;
    this.signalGroup('SIGHUP');
    const hard = setTimeout(() => {
      this.signalGroup('SIGKILL');
      this.relay.kill('SIGKILL');
      void this.options.cgroup?.kill();
    }, graceMs);
    try {
      return await this.ended;
    } finally {
      clearTimeout(hard);
    }
  }

  info(): PtyInfo {
    return {
      id: this.id,
      pid: this.pid,
      cols: this.cols,
      rows: this.rows,
      command: this.options.command,
      cwd: this.options.cwd,
      status: this.exit ? 'exited' : 'running',
      exitCode: this.exit?.exitCode ?? null,
      signal: this.exit?.signal ?? null,
      createdAt: this.createdAt.toISOString(),
      exitedAt: this.exitedAt?.toISOString() ?? null,
      attachments: this.listeners.size,
    };
  }

  private signalGroup(signal: NodeJS.Signals): void {
    try {
      // The program leads its own session and process group (setsid in the relay), so -pid reaches its jobs.
      if (this.pid > 0) process.kill(-this.pid, signal);
    } catch {
      // Already gone.
    }
  }
}
