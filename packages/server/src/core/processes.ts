/**
 * Background processes in a session's VM: started with their own command, working directory, environment and
 * deadline, listed, re-attached to (their output from where the reader left off, `process-output.ts`), fed stdin,
 * sent signals and killed, while the VM and its other runs go on. Each is a kept exec of the VM's agent (stdout and
 * stderr apart, stdin and signals on the same stream), held by the node that started it: its record and output live
 * in this process's memory (the newest `OUTPUT_LIMIT_BYTES` of output, ended processes for `ENDED_KEPT_MS`).
 *
 * A kept exec outlives its stream: when the link to the agent goes away (the VM is paused, its link dropped) the
 * process is `detached` but still `running` to readers, and its stream is opened again (`attachExec`, from the bytes
 * already received) when the VM is active again: before list, get, attach, stdin, signals and kill answer, and a few
 * times soon after the stream went away. A VM that ended (or came back without its memory) ends the process as
 * failed. After a restart of this server, the first look at a session whose VM runs adopts the agent's kept execs
 * that this node started (their `info`, kept-process-info.ts), so processes survive a restart of the server too.
 */
import { randomBytes } from 'node:crypto';
import type { ExecResult } from '@sandboxd/agent/protocol';
import type { Session } from '../model.ts';
import type { Principal } from './authenticator.ts';
import type { Clock } from './clock.ts';
import { AppError } from './errors.ts';
import { keptInfoOf, readKeptInfo } from './kept-process-info.ts';
import type { ProcessOutput } from './process-output.ts';
import { newProcess, openStream, START_TIMEOUT_MS, type BackgroundProcess } from './process-streams.ts';
import type { SessionService } from './sessions.ts';
import type { KeptExecInfo, SendableSignal } from './vm-engine.ts';
import { resumesOnTraffic, type VmService } from './vms/index.ts';

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
/** How long a read waits for a detached process's stream to open again before answering what it knows. */
const REATTACH_WAIT_MS = 10_000;
/** Tries to re-attach soon after a stream went away (1 s, 2 s, 4 s … apart), before waiting for the next read. */
const EAGER_REATTACH_TRIES = 6;

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

export class ProcessService {
  /**
   * By session and process id (`keyOf`): a process adopted from a VM's agent, whose info the guest could have made
   * up, can only ever stand for a process of that VM's own session.
   */
  private readonly processes = new Map<string, BackgroundProcess>();
  /** VMs whose kept execs this server has adopted (once per VM and server life). */
  private readonly adoptedVms = new Set<string>();
  /** Processes being started: their kept exec may be listed by the agent before they are in `processes`. */
  private readonly starting = new Set<string>();

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
    const view: ProcessView = {
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
    };
    const process = newProcess(view, principal.userId, OUTPUT_LIMIT_BYTES);
    const info = keptInfoOf({ ...view, node_id: this.vms.nodeId });
    const program = spec.argv ? { argv: spec.argv } : { command: spec.command!, shell: ['/bin/bash', '-c'] };
    const request = {
      ...program,
      env: { ...session.env, ...spec.env },
      cwd,
      timeoutMs: (spec.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000,
      ...(user === DEFAULT_USER ? {} : { user }),
      keep: true,
      info,
    };
    this.starting.add(processId);
    const { outcome, run } = await openStream(process, (output, stdin, signals) => agent.exec(request, output, undefined, stdin, signals)).finally(() =>
      this.starting.delete(processId),
    );
    if ('error' in outcome) throw outcome.error;
    if ('timeout' in outcome) {
      process.signals.send('SIGKILL');
      throw new AppError('VM_UNAVAILABLE', `the program did not start within ${START_TIMEOUT_MS / 1000} s`);
    }
    this.processes.set(keyOf(sessionId, processId), process);
    this.follow(process, session, run);
    return this.viewOf(process);
  }

  /** The session's processes (running, and ended ones still kept), oldest first. */
  async list(principal: Principal, sessionId: string): Promise<ProcessView[]> {
    const session = await this.sessions.getOwned(principal, sessionId);
    this.forgetEnded();
    await this.adopt(session);
    const mine = [...this.processes.values()].filter((p) => p.view.session_id === sessionId && p.userId === principal.userId);
    await Promise.all(mine.map((p) => this.reattached(p, session)));
    return mine.map((p) => this.viewOf(p));
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
    if (!process.view.stdin) throw new AppError('CONFLICT', `process ${processId} was started without stdin (start it with stdin: true)`);
    if (process.stdinClosed) throw new AppError('CONFLICT', `the stdin of process ${processId} is closed`);
    if (process.view.status !== 'running') throw new AppError('CONFLICT', `process ${processId} has ended`);
    const stdin = this.reachable(process).stdin;
    if (!stdin || stdin.destroyed) throw unreachable(process);
    if (data.length > 0 && !stdin.write(data)) await new Promise((resolve) => stdin.once('drain', resolve));
    if (eof) {
      process.stdinClosed = true;
      stdin.end();
    }
    return this.viewOf(process);
  }

  /** Sends a signal to the program's process group. CONFLICT when it has ended. */
  async signal(principal: Principal, sessionId: string, processId: string, signal: SendableSignal): Promise<ProcessView> {
    const process = await this.find(principal, sessionId, processId);
    if (process.view.status !== 'running') throw new AppError('CONFLICT', `process ${processId} has ended`);
    this.reachable(process).signals.send(signal);
    return this.viewOf(process);
  }

  /** Kills the program's process group (SIGKILL) and answers once it ended; an ended process answers as it is. */
  async kill(principal: Principal, sessionId: string, processId: string): Promise<ProcessView> {
    const process = await this.find(principal, sessionId, processId);
    if (process.view.status === 'running') {
      this.reachable(process).signals.send('SIGKILL');
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), 10_000);
      for await (const item of process.output.read(process.output.seq, { follow: true, signal: controller.signal })) if (item.kind === 'end') break;
      clearTimeout(timer);
    }
    return this.viewOf(process);
  }

  private async find(principal: Principal, sessionId: string, processId: string): Promise<BackgroundProcess> {
    const session = await this.sessions.getOwned(principal, sessionId);
    if (!this.processes.has(keyOf(sessionId, processId))) await this.adopt(session);
    const process = this.processes.get(keyOf(sessionId, processId));
    if (!process || process.view.session_id !== sessionId || process.userId !== principal.userId)
      throw new AppError('NOT_FOUND', `no process ${processId} in session ${sessionId}`);
    if (process.view.status === 'running') await this.resumedIfPaused(principal, session, process);
    await this.reattached(process, session);
    return process;
  }

  /**
   * A running process of a VM that paused by itself is in its memory: the VM is resumed for it (auto-resume). One
   * paused on request stays paused (the process answers 409 until the VM is resumed).
   */
  private async resumedIfPaused(principal: Principal, session: Session, process: BackgroundProcess): Promise<void> {
    const { state } = await this.vms.resolveVm(session);
    if (state.kind === 'paused' && state.vm.id === process.view.vm_id && resumesOnTraffic(state.vm)) await this.vms.ensureVm(principal, session);
  }

  /** Waits for a stream's end: the exit ends the process; a stream that went away with the link detaches it. */
  private follow(process: BackgroundProcess, session: Session, run: Promise<ExecResult>): void {
    run.then(
      (result) => this.ended(process, { exit_code: result.exitCode, signal: result.signal, timed_out: result.timedOut, status: 'exited' }),
      (error: unknown) => {
        if (process.link === 'ended') return;
        if (error instanceof AppError && error.code === 'VM_AGENT_UNAVAILABLE') {
          process.link = 'detached';
          process.stdin?.destroy();
          this.reattachSoon(process, session, 0);
        } else this.ended(process, { status: 'failed', error: error instanceof Error ? error.message : String(error) });
      },
    );
  }

  /** Re-attaches a detached process now if its VM is active (waiting a while for it), else leaves it detached. */
  private async reattached(process: BackgroundProcess, session: Session): Promise<void> {
    if (process.link !== 'detached') return;
    process.reattaching ??= this.reattach(process, session)
      .catch(() => undefined)
      .finally(() => (process.reattaching = null));
    await Promise.race([process.reattaching, new Promise((resolve) => setTimeout(resolve, REATTACH_WAIT_MS).unref())]);
  }

  private async reattach(process: BackgroundProcess, session: Session): Promise<void> {
    const { state } = await this.vms.resolveVm(session);
    const vm = 'vm' in state ? state.vm : null;
    if (state.kind === 'none' || state.kind === 'ended' || (vm && vm.id !== process.view.vm_id)) {
      this.ended(process, { status: 'failed', error: `lost with its VM ${process.view.vm_id} (it ended)` });
      return;
    }
    // Paused, resuming, starting or out of reach: it may come back; the next read tries again.
    if (state.kind !== 'active') return;
    const agent = this.vms.agentOf(state.vm);
    const pid = process.view.pid;
    if (!agent || pid === null || process.link !== 'detached') return;
    // Given up on (the process runs on) when the agent does not attach in time.
    const giveUp = new AbortController();
    const { outcome, run } = await openStream(process, (output, stdin, signals) =>
      agent.attachExec(pid, { ...process.received }, output, giveUp.signal, stdin, signals),
    );
    if ('timeout' in outcome) giveUp.abort();
    if ('pid' in outcome) this.follow(process, session, run);
    else if ('error' in outcome && outcome.error instanceof AppError && ['NOT_FOUND', 'BAD_REQUEST'].includes(outcome.error.code)) {
      // The agent keeps no such process (or keeps none: an agent before protocol 1.8): the VM came back without its
      // memory (a reboot). Any other error (the link still down) leaves it detached for the next try.
      this.ended(process, { status: 'failed', error: `lost with its VM ${process.view.vm_id}: ${(outcome.error as Error).message}` });
    }
  }

  /** Soon after a stream went away: a link that comes back (or a VM that ended) is noticed without a read. */
  private reattachSoon(process: BackgroundProcess, session: Session, attempt: number): void {
    if (attempt >= EAGER_REATTACH_TRIES) return;
    setTimeout(
      () => {
        if (process.link !== 'detached') return;
        void this.reattached(process, session).then(() => {
          if (process.link === 'detached') this.reattachSoon(process, session, attempt + 1);
        });
      },
      1000 * 2 ** attempt,
    ).unref();
  }

  /** The process with a stream to reach it; CONFLICT while its VM is away (paused, or its link down). */
  private reachable(process: BackgroundProcess): BackgroundProcess {
    if (process.link === 'detached') throw unreachable(process);
    return process;
  }

  /**
   * After a restart of this server: the kept execs this node started in the session's running VM, adopted once per
   * VM as processes of the session's owner (their output from what the agent still keeps).
   */
  private async adopt(session: Session): Promise<void> {
    const vmId = session.currentVmId;
    if (!vmId || this.adoptedVms.has(vmId)) return;
    const { state } = await this.vms.resolveVm(session);
    if (state.kind !== 'active') return;
    const agent = this.vms.agentOf(state.vm);
    if (!agent || this.adoptedVms.has(state.vm.id)) return;
    let kept: KeptExecInfo[];
    try {
      kept = await agent.listKeptExecs();
    } catch {
      return; // tried again at the next look
    }
    if (this.adoptedVms.has(state.vm.id)) return;
    this.adoptedVms.add(state.vm.id);
    for (const exec of kept) {
      const info = readKeptInfo(exec);
      if (!info || info.node_id !== this.vms.nodeId || this.processes.has(keyOf(session.id, info.process_id)) || this.starting.has(info.process_id)) continue;
      const { node_id: _node, ...fields } = info;
      const view: ProcessView = {
        ...fields,
        session_id: session.id,
        vm_id: state.vm.id,
        pid: exec.pid,
        status: 'running',
        exit_code: null,
        signal: null,
        timed_out: false,
        error: null,
        ended_at: null,
        output_seq: 0,
      };
      const process = newProcess(view, session.userId, OUTPUT_LIMIT_BYTES);
      process.link = 'detached';
      this.processes.set(keyOf(session.id, view.process_id), process);
    }
  }

  private ended(process: BackgroundProcess, how: Partial<ProcessView> & { status: ProcessStatus }): void {
    if (process.link === 'ended') return;
    process.link = 'ended';
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

function keyOf(sessionId: string, processId: string): string {
  return `${sessionId}/${processId}`;
}

function unreachable(process: BackgroundProcess): AppError {
  return new AppError(
    'CONFLICT',
    `process ${process.view.process_id} runs on in VM ${process.view.vm_id}, which cannot be reached now (paused, or its link is down): resume the VM and retry`,
  );
}
