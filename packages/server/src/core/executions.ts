/**
 * Executions: run code (Python in the session's stateful interpreter, or a bash / node command) in the
 * session's VM, and keep a record of each run. A sync call waits up to its `timeout`; when the wait ends
 * first it answers 408 with the execution id and the run goes on, completing its record later. Output is
 * kept up to a configured size per stream, with a truncation flag.
 */
import { EventEmitter } from 'node:events';
import type { Principal } from './authenticator.ts';
import { BoundedOutput } from './bounded-output.ts';
import type { Clock } from './clock.ts';
import { AppError, notFound } from './errors.ts';
import { recordEvent, type EventNotifier } from './events.ts';
import { CANCELLED_ERROR, endInFlightExecutions, recordExecutionEnd, RESTARTED_ERROR, SHUT_DOWN_ERROR } from './execution-ends.ts';
import type { PlanLimiter } from './limits.ts';
import {
  IN_FLIGHT_EXECUTION_STATUSES,
  type Execution,
  type ExecutionMode,
  type Language,
  type PreStopHook,
  type PythonContext,
  type PreStopTrigger,
  type Session,
  type Vm,
} from '../model.ts';
import type { SessionService } from './sessions.ts';
import type { AcquireEstimate, GuestAgent } from './vm-engine.ts';
import { pythonContextOf, type LiveVm, type VmService } from './vms/index.ts';
import type { Database } from '../store/database.ts';
import { findExecution, insertExecution, listExecutions, updateExecution, type NewExecution } from '../store/executions-store.ts';
import { findSession } from '../store/sessions-store.ts';
import type { PythonContextService } from './python-contexts.ts';
import { agentContextId, pythonOutcome, pythonStream } from './python-runs.ts';
import { commandOutcome, type RunOutcome } from './run-outcomes.ts';
import { startSpan } from '../observability/spans.ts';

export type { Language };

export interface ExecuteRequest {
  sessionId: string | null;
  language: Language;
  /** The code (python, node) or command (bash). */
  source: string;
  /** How long a sync call waits, seconds. */
  timeoutSeconds: number;
  /** Python only: an extra context of the session (`POST /v1/sessions/{id}/contexts`); absent for its default one. */
  contextId?: string | null;
  /** The run's output as it is written (a streamed execute); the record gets all of it anyway. */
  onOutput?: (stream: 'stdout' | 'stderr', chunk: Buffer) => void;
  /**
   * Python, streamed: whether `onOutput` also gets what the record's output adds at the end (the last value on
   * stdout, the traceback on stderr). Default true; a notebook-like reader, which shows `results` and `exception`
   * apart, turns it off so they are not shown twice.
   */
  streamTails?: boolean;
  /** bash and node only: environment variables of this run, over the session's (Python's interpreter has its own). */
  env?: Record<string, string>;
}

export interface ExecutionSettings {
  /** Kept per stream; more is dropped and flagged. */
  outputLimitBytes: number;
  /** Longest a run may take inside the VM (also bounded by the VM's remaining lifetime). */
  maxRunSeconds: number;
}

/** A run's final record, and the agent error that ended it, if one did. */
interface RunResult {
  execution: Execution;
  agentError: AppError | null;
}

/** The outcome of a finished run, before it is written. */

const SOURCE_LIMIT = 64 * 1024;
/** How long past its timeout a pre-stop hook's agent may take to answer before the stop goes on without it. */
const PRE_STOP_GRACE_MS = 5_000;

/** What an ExecutionService tells its observers (metrics): `finished` once per run this node ended, after its commit. */
export interface ExecutionEvents {
  finished: [Execution];
}

export class ExecutionService {
  readonly events = new EventEmitter<ExecutionEvents>();
  /** Set by a graceful stop: runs still going are recorded failed already, and the store is about to close. */
  private stopping = false;
  /** This node's runs that may still be cancelled, by execution id: what stops each, and its end. */
  private readonly cancellable = new Map<number, { controller: AbortController; done: Promise<unknown> }>();

  constructor(
    private readonly database: Database,
    private readonly sessions: SessionService,
    private readonly vms: VmService,
    private readonly limiter: PlanLimiter,
    private readonly clock: Clock,
    private readonly notifier: EventNotifier,
    private readonly settings: ExecutionSettings,
    private readonly contexts: PythonContextService,
  ) {
    // Python runs in the session's interpreter (context: the session id, or for a clone its snapshot's), which a new
    // VM starts without the session's env: it gets it once per VM, as a ready step (core/vms/readiness.ts). Commands
    // get the env on every call.
    vms.setPreStopRunner((vm, agent, hook, stop) => this.runPreStopHook(vm, agent, hook, stop));
  }

  /**
   * Starts a run and answers at once (async execute); `done` resolves with its final record, `queue` says
   * where it stands when it waits for a new VM.
   */
  async start(
    principal: Principal,
    request: ExecuteRequest,
    mode: ExecutionMode,
  ): Promise<{ record: Execution; done: Promise<Execution>; queue: QueuePlace | null }> {
    const { record, run, queue } = await this.launch(principal, request, mode);
    return { record, done: run.then((result) => result.execution), queue };
  }

  /**
   * Admits a run, records it and starts it, inside the run's span (`execution.run`): the VM's acquisition and the
   * agent's calls nest under it, and it ends with the run, which may be after the request answered.
   */
  private async launch(principal: Principal, request: ExecuteRequest, mode: ExecutionMode): ReturnType<ExecutionService['launchTraced']> {
    const traced = startSpan('execution.run', { 'sandboxd.execution.language': request.language, 'sandboxd.execution.mode': mode });
    try {
      const launched = await traced.within(() => this.launchTraced(principal, request, mode));
      traced.span.setAttributes({ 'sandboxd.execution.id': launched.record.id, 'sandboxd.session.id': launched.record.sessionId });
      void launched.run.then(({ execution, agentError }) => {
        traced.span.setAttribute('sandboxd.execution.status', execution.status);
        if (execution.vmId) traced.span.setAttribute('sandboxd.vm.id', execution.vmId);
        traced.end(agentError ?? undefined);
      });
      return launched;
    } catch (error) {
      traced.end(error);
      throw error;
    }
  }

  private async launchTraced(
    principal: Principal,
    request: ExecuteRequest,
    mode: ExecutionMode,
  ): Promise<{ record: Execution; run: Promise<RunResult>; vmReady: Promise<LiveVm>; queue: QueuePlace | null }> {
    await this.limiter.assertCanExecute(this.database.db, principal);
    // The session and its VM are read once (one query) and resolved once: the admission, the record and the VM
    // acquisition all work from that (a warm execute makes five store round trips: test/vms/warm-execute-round-trips).
    const existing = request.sessionId ? await this.sessions.getOwnedWithVm(principal, request.sessionId) : null;
    const context = await this.contexts.forExecute(principal, request.language, request.contextId, existing?.session ?? null);
    const { live, estimate, resolved } = await this.vms.admission(existing ?? this.sessions.specFor());
    if (mode === 'sync') assertReadyInTime(estimate, request.timeoutSeconds);
    const session = resolved?.session ?? (await this.sessions.create(principal));
    // A running VM takes the run at once: it is recorded running in it from the start.
    const record = await insertExecution(
      this.database.db,
      this.newRecord({
        userId: principal.userId,
        sessionId: session.id,
        vmId: live?.vm.id ?? null,
        mode,
        trigger: 'request',
        language: request.language,
        source: request.source,
        status: live ? 'running' : 'queued',
        contextId: context?.id ?? null,
      }),
    );
    void this.sessions.noteActivity(session).catch(() => {});
    const vmReady = live ? Promise.resolve(live) : this.vms.ensureVm(principal, session, resolved ?? undefined);
    vmReady.catch(() => {}); // observed by run(); a sync caller also awaits it
    // The run owns its record from here on: it never rejects, every failure ends up in the record.
    const run = this.run(session, record, request, context, vmReady, principal);
    const queue = estimate && !estimate.pooled ? { position: estimate.position, estimatedWaitSeconds: Math.ceil(estimate.waitMs / 1000) } : null;
    return { record, run, vmReady, queue };
  }

  /**
   * Sync execute: waits up to the request's timeout, then answers 408 and lets the run go on. A run that
   * failed because the VM's agent did not answer is recorded failed and answered with that error (503).
   */
  async execute(principal: Principal, request: ExecuteRequest): Promise<Execution> {
    const { record, run, vmReady } = await this.launch(principal, request, 'sync');
    let timer: NodeJS.Timeout | undefined;
    // No VM (quota, start failure) is the caller's answer (429, 503), not a failed run with status 200.
    const noVm = vmReady.then(() => new Promise<never>(() => {}));
    // The timer goes whatever the race ends with: a refused VM (429, 507) must not leave it holding the process.
    const waited = await Promise.race([
      run,
      noVm,
      new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), request.timeoutSeconds * 1000);
      }),
    ]).finally(() => clearTimeout(timer));
    if (waited?.agentError)
      throw new AppError('VM_AGENT_UNAVAILABLE', waited.agentError.message, {}, { execution_id: record.id, session_id: record.sessionId });
    if (waited) return waited.execution;
    throw new AppError(
      'EXECUTION_TIMEOUT',
      `the execution is still running after ${request.timeoutSeconds} s; it goes on: poll GET /v1/executions/${record.id}`,
      {},
      { execution_id: record.id, session_id: record.sessionId },
    );
  }

  /**
   * Streamed execute: like {@link execute}, but answers once the run has its VM, with its record and the run's
   * end; the output goes to `request.onOutput` meanwhile. Refusals (rate limit, quota, no VM) are thrown here,
   * before anything was streamed. `finished` rejects with VM_AGENT_UNAVAILABLE when the VM's agent failed the run.
   */
  async executeStreamed(principal: Principal, request: ExecuteRequest): Promise<{ record: Execution; finished: Promise<Execution> }> {
    const { record, run, vmReady } = await this.launch(principal, request, 'sync');
    await vmReady;
    const finished = run.then(({ execution, agentError }) => {
      if (agentError) throw new AppError('VM_AGENT_UNAVAILABLE', agentError.message, {}, { execution_id: record.id, session_id: record.sessionId });
      return execution;
    });
    return { record, finished };
  }

  /**
   * Ends this node's in-flight executions as failed, each with its event: at start, those whose runner died
   * with the previous process (it crashed or was killed); at a graceful stop, those whose runner stops now.
   * Other nodes' runs are left alone. Answers how many.
   */
  async endRunsOfThisNode(why: 'restarted' | 'stopping'): Promise<number> {
    if (why === 'stopping') this.stopping = true;
    const error = why === 'restarted' ? RESTARTED_ERROR : SHUT_DOWN_ERROR;
    const ended = await this.database.db.transaction().execute((trx) => endInFlightExecutions(trx, this.clock, { nodeId: this.vms.nodeId }, error));
    if (ended > 0) this.notifier.committed();
    return ended;
  }

  /**
   * Stops one of the caller's runs (queued or running) and answers its final record, failed with CANCELLED_ERROR:
   * a command's process group is killed, Python code is interrupted (the interpreter keeps its state), a queued run
   * never starts. The VM and its other runs go on. CONFLICT when the run has already ended; VM_UNAVAILABLE when
   * another node of the cluster runs it.
   */
  async cancel(principal: Principal, id: number): Promise<Execution> {
    const row = await this.get(principal, id);
    if (!(IN_FLIGHT_EXECUTION_STATUSES as readonly string[]).includes(row.status))
      throw new AppError('CONFLICT', `execution ${id} has already ended (${row.status})`);
    const run = this.cancellable.get(id);
    if (!run) {
      if (row.nodeId && row.nodeId !== this.vms.nodeId) throw new AppError('VM_UNAVAILABLE', `execution ${id} runs on node ${row.nodeId}: cancel it there`);
      throw new AppError('CONFLICT', `execution ${id} is ending`);
    }
    run.controller.abort();
    await run.done;
    return this.get(principal, id);
  }

  async get(principal: Principal, id: number): Promise<Execution> {
    const row = await findExecution(this.database.db, principal.userId, id);
    if (!row) throw notFound(`execution ${id}`);
    return row;
  }

  async list(principal: Principal, options: { limit: number; offset: number; sessionId?: string }): Promise<Execution[]> {
    return listExecutions(this.database.db, principal.userId, options.limit, options.offset, options.sessionId);
  }

  private run(
    session: Session,
    record: Execution,
    request: ExecuteRequest,
    context: PythonContext | null,
    vmReady: Promise<LiveVm>,
    principal: Principal,
  ): Promise<RunResult> {
    const controller = new AbortController();
    const done = this.runUntilCancelled(session, record, request, context, vmReady, principal, controller.signal);
    this.cancellable.set(record.id, { controller, done });
    void done.finally(() => this.cancellable.delete(record.id));
    return done;
  }

  private async runUntilCancelled(
    session: Session,
    record: Execution,
    request: ExecuteRequest,
    context: PythonContext | null,
    vmReady: Promise<LiveVm>,
    principal: Principal,
    cancelled: AbortSignal,
  ): Promise<RunResult> {
    const started = this.clock.now();
    let outcome: RunOutcome;
    let vmId: string | null = null;
    let agentError: AppError | null = null;
    try {
      const live = await vmReady;
      if (cancelled.aborted) throw new AppError('CONFLICT', CANCELLED_ERROR);
      vmId = live.vm.id;
      if (record.status !== 'running')
        await updateExecution(this.database.db, record.id, { vmId, status: 'running', startedAt: this.clock.now().toISOString() });
      const remainingMs = Date.parse(live.vm.expiresAt) - this.clock.now().getTime();
      const deadlineMs = Math.max(1000, Math.min(this.settings.maxRunSeconds * 1000, remainingMs));
      outcome =
        request.language === 'python'
          ? await this.runPython(live.agent, pythonContextOf(live.vm) ?? session.id, context, request, deadlineMs, cancelled)
          : await this.runCommand(live.agent, request, { ...session.env, ...request.env }, deadlineMs, cancelled);
      if (cancelled.aborted) throw new AppError('CONFLICT', CANCELLED_ERROR);
    } catch (thrown) {
      // A cancelled run fails however the agent said it stopped.
      const error = cancelled.aborted ? new AppError('CONFLICT', CANCELLED_ERROR) : thrown;
      if (error instanceof AppError && error.code === 'VM_AGENT_UNAVAILABLE') agentError = error;
      const stdout = new BoundedOutput(0);
      const stderr = new BoundedOutput(this.settings.outputLimitBytes);
      const message = error instanceof AppError ? error.message : `the execution could not run: ${(error as Error).message}`;
      stderr.pushText(message);
      outcome = {
        status: 'failed',
        exitCode: null,
        error: message,
        stdout,
        stderr,
        executionTime: (this.clock.now().getTime() - started.getTime()) / 1000,
        cpuTime: null,
      };
    }
    return { execution: await this.finish(principal.userId, record, vmId, outcome), agentError };
  }

  private async runPython(
    agent: GuestAgent,
    base: string,
    context: PythonContext | null,
    request: ExecuteRequest,
    deadlineMs: number,
    cancelled?: AbortSignal,
  ): Promise<RunOutcome> {
    const contextId = agentContextId(base, context);
    const stream = request.onOutput ? pythonStream(request.onOutput, request.streamTails !== false) : undefined;
    const result = await agent.runPython(
      { contextId, code: request.source, timeoutMs: deadlineMs, ...(context ? { cwd: context.cwd } : {}) },
      cancelled,
      stream?.output,
    );
    stream?.end(result);
    return pythonOutcome(result, this.settings.outputLimitBytes, deadlineMs);
  }

  private async runCommand(
    agent: GuestAgent,
    request: ExecuteRequest,
    env: Record<string, string>,
    deadlineMs: number,
    cancelled?: AbortSignal,
  ): Promise<RunOutcome> {
    const stdout = new BoundedOutput(this.settings.outputLimitBytes);
    const stderr = new BoundedOutput(this.settings.outputLimitBytes);
    const argv = request.language === 'node' ? ['node', '-e', request.source] : undefined;
    const result = await agent.exec(
      // bash -c, not a login shell: the guest's PATH is set by its init, and -l costs ~150 ms per command under TCG.
      { ...(argv ? { argv } : { command: request.source, shell: ['/bin/bash', '-c'] }), env, cwd: '/root', timeoutMs: deadlineMs },
      {
        onStdout: (c) => (stdout.push(c), request.onOutput?.('stdout', c)),
        onStderr: (c) => (stderr.push(c), request.onOutput?.('stderr', c)),
      },
      cancelled,
    );
    return commandOutcome(result, stdout, stderr, `killed after ${Math.round(deadlineMs / 1000)} s`);
  }

  /** A record about to run (queued) or running: nothing out yet, the source cut to what is kept. */
  private newRecord(
    fields: Pick<NewExecution, 'userId' | 'sessionId' | 'vmId' | 'mode' | 'trigger' | 'language' | 'source' | 'status'> & { contextId?: string | null },
  ): NewExecution {
    const now = this.clock.now().toISOString();
    return {
      ...fields,
      nodeId: this.vms.nodeId,
      source: fields.source.slice(0, SOURCE_LIMIT),
      exitCode: null,
      error: null,
      stdout: '',
      stderr: '',
      stdoutTruncated: false,
      stderrTruncated: false,
      createdAt: now,
      startedAt: fields.status === 'running' ? now : null,
      completedAt: null,
      executionTime: null,
      cpuTime: null,
      results: [],
      exception: null,
      contextId: fields.contextId ?? null,
    };
  }

  /**
   * Runs a VM's pre-stop hook (bash, with the session's env, like an execute) and keeps it as an ordinary
   * execution record with `trigger: pre_stop`, then records `vm.pre_stop_hook`. Bounded by the hook's
   * timeout: the agent kills the command then; an agent that does not answer within a grace period after it
   * leaves the record ended as timed out, with the output received so far. Never throws: the stop goes on.
   */
  async runPreStopHook(vm: Vm, agent: GuestAgent, hook: PreStopHook, stop: PreStopTrigger): Promise<Execution | null> {
    const sessionId = vm.sessionId;
    if (!sessionId) return null; // records belong to a session; every VM started by a request has one
    const session = await findSession(this.database.db, sessionId);
    const record = await insertExecution(
      this.database.db,
      this.newRecord({
        userId: vm.userId,
        sessionId,
        vmId: vm.id,
        mode: 'sync',
        trigger: 'pre_stop',
        language: 'bash',
        source: hook.command,
        status: 'running',
      }),
    );
    const started = Date.now();
    const stdout = new BoundedOutput(this.settings.outputLimitBytes);
    const stderr = new BoundedOutput(this.settings.outputLimitBytes);
    const timeoutMs = hook.timeoutSeconds * 1000;
    let outcome: RunOutcome;
    try {
      const run = agent.exec(
        { command: hook.command, shell: ['/bin/bash', '-c'], env: session?.env ?? {}, cwd: '/root', timeoutMs },
        { onStdout: (c) => stdout.push(c), onStderr: (c) => stderr.push(c) },
      );
      run.catch(() => {}); // observed below, or abandoned after the grace period
      let timer: NodeJS.Timeout | undefined;
      const abandoned = new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), timeoutMs + PRE_STOP_GRACE_MS);
      });
      const result = await Promise.race([run, abandoned]).finally(() => clearTimeout(timer));
      if (!result) {
        outcome = {
          status: 'timeout',
          exitCode: null,
          error: `the pre-stop hook did not end within ${hook.timeoutSeconds} s; the VM was stopped anyway`,
          stdout,
          stderr,
          executionTime: (Date.now() - started) / 1000,
          cpuTime: null,
        };
      } else {
        outcome = commandOutcome(
          result,
          stdout,
          stderr,
          `the pre-stop hook was killed after its timeout of ${hook.timeoutSeconds} s; the VM was stopped anyway`,
        );
      }
    } catch (error) {
      const message = error instanceof AppError ? error.message : `the pre-stop hook could not run: ${(error as Error).message}`;
      stderr.pushText(message);
      outcome = { status: 'failed', exitCode: null, error: message, stdout, stderr, executionTime: (Date.now() - started) / 1000, cpuTime: null };
    }
    const execution = await this.finish(vm.userId, record, vm.id, outcome);
    await recordEvent(this.database.db, this.clock, {
      type: 'vm.pre_stop_hook',
      userId: vm.userId,
      subjectId: vm.id,
      data: {
        vm_id: vm.id,
        session_id: sessionId,
        execution_id: execution.id,
        stop,
        // Always final here: finish wrote it, or found it ended meanwhile (its VM ended first).
        status: execution.status === 'completed' || execution.status === 'timeout' ? execution.status : 'failed',
        exit_code: execution.exitCode,
        timed_out: execution.status === 'timeout',
      },
    });
    this.notifier.committed();
    return execution;
  }

  /**
   * Writes the run's outcome and its event, unless the record was ended meanwhile (its VM ended, or the
   * server reconciled it): that record stands and is returned as it is.
   */
  private async finish(userId: number, record: Execution, vmId: string | null, outcome: RunOutcome): Promise<Execution> {
    if (this.stopping) return { ...record, vmId, status: 'failed', error: SHUT_DOWN_ERROR };
    const row = await this.database.db.transaction().execute(async (trx) => {
      const updated = await updateExecution(
        trx,
        record.id,
        {
          vmId,
          status: outcome.status,
          exitCode: outcome.exitCode,
          error: outcome.error,
          stdout: outcome.stdout.text(),
          stderr: outcome.stderr.text(),
          stdoutTruncated: outcome.stdout.truncated,
          stderrTruncated: outcome.stderr.truncated,
          completedAt: this.clock.now().toISOString(),
          executionTime: outcome.executionTime,
          cpuTime: outcome.cpuTime,
          results: outcome.results ?? [],
          exception: outcome.exception ?? null,
        },
        IN_FLIGHT_EXECUTION_STATUSES,
      );
      if (!updated) return { execution: (await findExecution(trx, userId, record.id))!, endedHere: false };
      await recordExecutionEnd(trx, this.clock, updated);
      return { execution: updated, endedHere: true };
    });
    this.notifier.committed();
    if (row.endedHere) this.events.emit('finished', row.execution);
    return row.execution;
  }
}

/** Where a run that waits for a new VM stands: VM starts ahead of it and the expected wait. */
export interface QueuePlace {
  position: number;
  estimatedWaitSeconds: number;
}

/**
 * A sync call that would need a new VM the host cannot have ready within the call's timeout (restores beyond
 * what the host runs at once wait their turn, first come first served) is refused before anything is made:
 * 429 CAPACITY_BUSY with its place in the queue and `Retry-After`, instead of a 408 with the VM half-made.
 * Async calls queue: their answer carries the same place.
 */
function assertReadyInTime(estimate: AcquireEstimate | null, timeoutSeconds: number): void {
  if (!estimate || estimate.pooled || estimate.waitMs <= timeoutSeconds * 1000) return;
  const retryAfter = Math.max(1, Math.ceil(estimate.waitMs / 1000));
  throw new AppError(
    'CAPACITY_BUSY',
    `no VM can be ready within the ${timeoutSeconds} s this call waits: ${estimate.position} VM starts are ahead of it (about ${retryAfter} s); ` +
      `retry after ${retryAfter} s, wait longer (timeout), or use /execute_async, which queues`,
    { 'Retry-After': String(retryAfter) },
    { retry_after: retryAfter, queue_position: estimate.position, estimated_wait_seconds: retryAfter },
  );
}
