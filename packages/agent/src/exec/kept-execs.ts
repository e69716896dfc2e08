/**
 * Kept execs (protocol 1.8, `keep: true`): processes that outlive their exec stream. When the link goes away
 * (the VM is paused and resumed, the host restarts) the process runs on and its output goes into a bounded log per
 * stream; a host re-attaches (`POST /v1/exec/attach`) with the byte offsets it already has and gets the rest, then
 * live output and the exit. The table is the agent's memory, so it survives exactly what the process survives: a
 * pause and resume (memory restored) keeps both, a reboot loses both.
 */
import type { ServerHttp2Stream } from 'node:http2';
import { AgentFailure } from '../http/agent-failure.ts';
import { encodeFrame, encodeJsonFrame, FrameType } from '../protocol/frames.ts';
import { KEPT_EXEC_ENDED_MS, KEPT_EXEC_LOG_BYTES, MAX_KEPT_EXECS, type ExecResult, type ExecStarted, type KeptExecInfo } from '../protocol/messages.ts';
import type { ExecProcess } from './exec-process.ts';
import { mergeBySeq, OutputLog } from './output-log.ts';

/** What an attached stream starts from: the offsets its replay really begins at. */
export interface AttachOffsets {
  stdoutOffset: number;
  stderrOffset: number;
}

/** One kept exec: its process, its output logs, the stream attached to it (at most one) and, once ended, its result. */
export class KeptExec {
  private readonly stdout = new OutputLog(KEPT_EXEC_LOG_BYTES);
  private readonly stderr = new OutputLog(KEPT_EXEC_LOG_BYTES);
  private seq = 0;
  private attached: ServerHttp2Stream | null = null;
  /** The attached stream whose full buffer holds the process's output back (until it drains or goes). */
  private pausedBy: ServerHttp2Stream | null = null;
  private process: ExecProcess | null = null;
  /** The stream the exit was written to: once the host ends that stream's request body, it has the exit. */
  private exitSentOn: ServerHttp2Stream | null = null;
  /** How it ended; null while it runs. */
  result: ExecResult | null = null;
  /** When it ended (`performance.now()`); null while it runs. */
  endedAt: number | null = null;

  constructor(
    readonly info: Record<string, unknown>,
    /** Called once a host confirmed it has the exit: nothing more to keep. */
    private readonly collected: (exec: KeptExec) => void,
  ) {}

  /** Binds the started process (its output callbacks are this exec's `output`). */
  bind(process: ExecProcess): void {
    this.process = process;
  }

  get pid(): number {
    return this.process?.pid ?? -1;
  }

  get running(): ExecProcess {
    if (!this.process) throw new AgentFailure('INTERNAL', 'a kept exec without its process');
    return this.process;
  }

  /** Output of the process: logged, and written to the attached stream. */
  output(stream: 'stdout' | 'stderr', chunk: Buffer): void {
    (stream === 'stdout' ? this.stdout : this.stderr).push(++this.seq, chunk);
    if (this.attached) this.send(this.attached, encodeFrame(stream === 'stdout' ? FrameType.Stdout : FrameType.Stderr, chunk));
  }

  /**
   * Makes `stream` (answered 200 already) the attached one, replacing any other: `Started` with the offsets the
   * replay starts at, the kept output from there on, and the `Exit` at once when the process has ended.
   */
  attach(stream: ServerHttp2Stream, from: AttachOffsets): AttachOffsets {
    const previous = this.attached;
    this.detach(previous);
    if (previous && !previous.closed) previous.close(0x8 /* NGHTTP2_CANCEL: another host stream took over */);
    const start = { stdoutOffset: this.stdout.startFor(from.stdoutOffset), stderrOffset: this.stderr.startFor(from.stderrOffset) };
    const started: ExecStarted = { pid: this.pid, ...start };
    this.attached = stream;
    this.send(stream, encodeJsonFrame(FrameType.Started, started));
    for (const { from: which, chunk } of mergeBySeq(this.stdout.from(start.stdoutOffset), this.stderr.from(start.stderrOffset))) {
      this.send(stream, encodeFrame(which === 'a' ? FrameType.Stdout : FrameType.Stderr, chunk.data));
    }
    if (this.result) this.deliverExit(stream, this.result);
    return start;
  }

  /** `stream` went away: the process runs on, its output only logged. */
  detach(stream: ServerHttp2Stream | null): void {
    if (!stream || this.attached !== stream) return;
    this.attached = null;
    if (this.pausedBy === stream) {
      this.pausedBy = null;
      this.process?.resumeOutput();
    }
  }

  /** The process ended (its output all read): the attached stream gets the exit, else it waits for the next attach. */
  finish(result: ExecResult): void {
    this.result = result;
    this.endedAt = performance.now();
    if (this.attached) this.deliverExit(this.attached, result);
  }

  describe(): KeptExecInfo {
    return {
      pid: this.pid,
      result: this.result,
      info: this.info,
      stdoutBytes: this.stdout.total,
      stderrBytes: this.stderr.total,
      attached: this.attached !== null,
    };
  }

  /**
   * The host ended `stream`'s request body. A host ends it only after it read the exit (`ExecHandle`), so when the
   * exit went out on this stream the exec is collected; a stream that failed first leaves it for the next attach.
   */
  hostEnded(stream: ServerHttp2Stream): void {
    if (this.exitSentOn === stream) this.collected(this);
  }

  private deliverExit(stream: ServerHttp2Stream, result: ExecResult): void {
    if (stream.destroyed || stream.closed) return;
    this.exitSentOn = stream;
    stream.end(encodeJsonFrame(FrameType.Exit, result));
  }

  /** Writes a frame; a full stream holds the process's output back until it drains (as a plain exec does). */
  private send(stream: ServerHttp2Stream, frame: Buffer): void {
    if (stream.destroyed || stream.closed || stream.writableEnded) return;
    if (!stream.write(frame) && !this.pausedBy && this.process) {
      this.pausedBy = stream;
      this.process.pauseOutput();
      stream.once('drain', () => {
        if (this.pausedBy !== stream) return;
        this.pausedBy = null;
        this.process?.resumeOutput();
      });
    }
  }
}

/** The agent's kept execs by pid. */
export class KeptExecs {
  private readonly execs = new Map<number, KeptExec>();

  /** A new kept exec, not yet registered (its process starts next); TOO_MANY_KEPT_EXECS at the limit. */
  prepare(info: Record<string, unknown>): KeptExec {
    this.forgetExpired();
    if (this.execs.size >= MAX_KEPT_EXECS) {
      throw new AgentFailure('TOO_MANY_KEPT_EXECS', `this VM already keeps ${MAX_KEPT_EXECS} processes for re-attaching: wait for one to end, or kill one`);
    }
    return new KeptExec(info, (exec) => this.forget(exec));
  }

  /** Registers a started kept exec by its pid (an ended one that had the same pid goes: pids are reused). */
  register(exec: KeptExec): void {
    this.execs.set(exec.pid, exec);
  }

  /** EXEC_NOT_FOUND when there is none with that pid. */
  get(pid: number): KeptExec {
    this.forgetExpired();
    const exec = this.execs.get(pid);
    if (!exec) throw new AgentFailure('EXEC_NOT_FOUND', `no kept process ${pid} in this VM (it was collected, never kept, or the VM restarted)`);
    return exec;
  }

  list(): KeptExecInfo[] {
    this.forgetExpired();
    return [...this.execs.values()].map((exec) => exec.describe());
  }

  /** Kills every kept process (the agent is stopping). */
  close(): void {
    for (const exec of this.execs.values()) if (!exec.result) exec.running.abort();
    this.execs.clear();
  }

  private forget(exec: KeptExec): void {
    if (this.execs.get(exec.pid) === exec) this.execs.delete(exec.pid);
  }

  private forgetExpired(): void {
    // The monotonic clock: it stands still while the VM is paused, and the restore's clock step does not move it.
    const now = performance.now();
    for (const exec of this.execs.values()) if (exec.endedAt !== null && now - exec.endedAt >= KEPT_EXEC_ENDED_MS) this.forget(exec);
  }
}
