/**
 * Request and response bodies of the agent's routes (see `routes.ts`). Plain JSON shapes; times are
 * milliseconds (`...Ms`), sizes bytes, paths absolute guest paths (UTF-8, no NUL).
 */
import type { ProtocolVersion } from './version.ts';

/** Answer of `GET /v1/hello`. */
export interface HelloResponse {
  protocol: ProtocolVersion;
  /** The agent package's version. */
  agentVersion: string;
  /** The VM id the host gave this guest (kernel command line `sandboxd.vm_id=` or the last restore); null if none yet. */
  vmId: string | null;
  hostname: string;
  /**
   * The guest kernel's boot id, or null (1.3) before the VM's first `/v1/restore`. The kernel draws it at its first
   * read and keeps it; the agent reads it only after a restore reseeded the kernel's generator, so every clone of a
   * snapshot has its own (before 1.3, reading it in the snapshot's source gave all clones the same).
   */
  bootId: string | null;
  /** Operations this agent serves, for feature checks within a protocol major. */
  capabilities: string[];
  /** Guest uptime in seconds when the answer was made. */
  uptimeSeconds: number;
}

/** Answer of `GET /v1/ping`. */
export interface PingResponse {
  ok: true;
  /** Guest wall clock at the answer, ms since the epoch. Wrong after a restore until `/v1/restore` ran. */
  nowMs: number;
}

/** First frame of `POST /v1/exec`. Exactly one of `argv` and `command` must be given. */
export interface ExecRequest {
  /** Program and arguments, run directly; the program is looked up in the child's `PATH` if it has no slash. */
  argv?: string[];
  /** A shell command, run as `<shell...> <command>` (default shell `/bin/bash -lc`). */
  command?: string;
  /** Overrides the shell used for `command`, e.g. `["/bin/sh", "-c"]`. */
  shell?: string[];
  /** Added to (and overriding) the agent's environment. */
  env?: Record<string, string>;
  /** Working directory; default the agent's `HOME` (or `/`). Must exist. */
  cwd?: string;
  /** Deadline from start; on expiry the whole process group (and cgroup) is killed and `timedOut` is true. */
  timeoutMs?: number;
  /** True when the request body carries `Stdin` frames; otherwise the child's stdin is `/dev/null`. */
  stdin?: boolean;
  /**
   * (1.7) Runs the program as this account of the guest (its uid, gid, HOME, USER and LOGNAME), not as root;
   * the default working directory is then its home. An unknown name is `UNKNOWN_USER`.
   */
  user?: string;
  /**
   * (1.8, capability `exec-keep`) Keep the process when this stream ends before it does (the link went away: the
   * VM was paused, the host restarted): it runs on, its output kept (the newest {@link KEPT_EXEC_LOG_BYTES} of
   * each stream), until a host attaches to it again (`POST /v1/exec/attach`). Without it, the end of the stream
   * kills the process group.
   */
  keep?: boolean;
  /** (1.8) With `keep`: the host's own JSON object about the process, listed by `GET /v1/exec/kept` (≤ 4 KiB). */
  info?: Record<string, unknown>;
}

/** Payload of the `Started` frame. */
export interface ExecStarted {
  pid: number;
  /**
   * (1.8) Of a kept exec's stream (an attach, or an exec with `keep`): the byte offsets in its stdout and stderr
   * where this stream's output starts (an attach asked for more than the agent still keeps starts later).
   */
  stdoutOffset?: number;
  stderrOffset?: number;
}

/** (1.8) Most output a kept exec keeps per stream (stdout, stderr) for re-attaching: the newest bytes. */
export const KEPT_EXEC_LOG_BYTES = 1024 * 1024;
/** (1.8) Most kept execs (running, or ended and not yet collected) an agent holds at once. */
export const MAX_KEPT_EXECS = 64;
/** (1.8) Largest `info` of a kept exec, as JSON bytes. */
export const MAX_KEPT_EXEC_INFO_BYTES = 4096;
/** (1.8) How long a kept exec that ended stays listed when no attached stream delivered its `Exit`. */
export const KEPT_EXEC_ENDED_MS = 10 * 60_000;

/**
 * (1.8) First frame (`Request`) of `POST /v1/exec/attach`: which kept exec, and how much of each output stream the
 * host has already (the replay starts there, or at the oldest byte still kept).
 */
export interface ExecAttachRequest {
  pid: number;
  stdoutOffset: number;
  stderrOffset: number;
}

/** (1.8) A kept exec, as `GET /v1/exec/kept` lists it. */
export interface KeptExecInfo {
  pid: number;
  /** Null while it runs. */
  result: ExecResult | null;
  /** The host's `info` from the exec request. */
  info: Record<string, unknown>;
  /** Bytes the process wrote to each stream so far (the offsets of the next byte). */
  stdoutBytes: number;
  stderrBytes: number;
  /** A host stream is attached right now. */
  attached: boolean;
}

/** (1.8) Answer of `GET /v1/exec/kept`. */
export interface KeptExecListResponse {
  execs: KeptExecInfo[];
}

/** Payload of the `Exit` frame: how the process ended. */
export interface ExecResult {
  /** Exit status, or null when killed by a signal. */
  exitCode: number | null;
  /** Name of the terminating signal (e.g. `SIGKILL`), or null. */
  signal: string | null;
  /** True when the deadline killed the process. */
  timedOut: boolean;
  /** Wall time from spawn to exit. */
  durationMs: number;
  /**
   * CPU time of the process and all its descendants, from its own cgroup v2 (`cpu.stat`, microsecond
   * precision, includes processes that left the process group). Null when the guest has no cgroup v2.
   */
  cpu: ExecCpuTime | null;
}

/** CPU time in milliseconds (fractional, from microseconds). */
export interface ExecCpuTime {
  userMs: number;
  systemMs: number;
  totalMs: number;
}

/** Payload of the `Signal` frame (host → agent): deliver a signal to the process group. */
export interface ExecSignal {
  signal: string;
}

/** Payload of the `Resize` frame (host → agent on a PTY attachment), and body of `POST /v1/pty/resize` with `id`. */
export interface TerminalResize {
  cols: number;
  rows: number;
}

/** Body of `POST /v1/pty`: start a program on a new pseudo-terminal. */
export interface PtyCreateRequest {
  /** Program and arguments, looked up in `PATH` like exec. */
  argv: string[];
  cols: number;
  rows: number;
  /** Added to the agent's environment (`TERM` defaults to `xterm-256color`). */
  env?: Record<string, string>;
  cwd?: string;
  /** Output kept for re-attaching, 1 KiB to 1 MiB (default 64 KiB). */
  scrollbackBytes?: number;
}

/** A terminal, as `POST /v1/pty`, `GET /v1/pty/info`, resize and kill answer it. */
export interface PtyInfo {
  /** `pty-` and 16 hex digits. */
  id: string;
  /** The program's process id (leader of its own session and process group). */
  pid: number;
  cols: number;
  rows: number;
  command: string[];
  cwd: string;
  status: 'running' | 'exited';
  /** The exit status; null while running or when a signal ended the program. */
  exitCode: number | null;
  /** Name of the signal that ended the program, e.g. `SIGHUP`. */
  signal: string | null;
  /** ISO 8601. */
  createdAt: string;
  exitedAt: string | null;
  /** Host streams attached right now. */
  attachments: number;
}

/** Answer of `GET /v1/pty`. */
export interface PtyListResponse {
  terminals: PtyInfo[];
}

/** Body of `POST /v1/pty/kill`. */
export interface PtyKillRequest {
  id: string;
}

/** Payload of the `Exit` frame that ends a PTY attachment. */
export interface PtyExit {
  exitCode: number | null;
  signal: string | null;
}

/** Body of `POST /v1/python/run`. */
export interface PythonRunRequest {
  /** The session's interpreter; created on first use. 1 to 128 characters of `[A-Za-z0-9_.:-]`. Ignored with `spare`. */
  contextId: string;
  code: string;
  /** On expiry the code is interrupted (SIGINT → KeyboardInterrupt); the interpreter and its state survive. */
  timeoutMs?: number;
  /**
   * (1.4, capability `python-spare`) Run in the pre-started spare interpreter's scratch namespace instead of a
   * context: the spare stays unassigned and its state unchanged. UNAVAILABLE when there is no spare. Used to
   * warm a restored VM before it is handed out.
   */
  spare?: boolean;
  /**
   * (1.6, capability `python-results`) Where a context's interpreter works: applied (`os.chdir`) before this run
   * only when the run starts the context's interpreter, so a context keeps its directory once it changed it.
   */
  cwd?: string;
  /**
   * (1.7, capability `python-stream`) Answer frames instead of JSON: `Stdout`/`Stderr` frames as the run writes,
   * then an `Exit` frame carrying the {@link PythonRunResult} (all the output again), or an `Error` frame. An older
   * agent ignores the field and answers JSON.
   */
  stream?: boolean;
}

/**
 * (1.6, capability `python-results`) One rich result of a run, as a notebook shows it: each format the value
 * shows itself in (IPython's `_repr_*_` protocol; binary formats base64). `text` is always there.
 */
export interface PythonRichResult {
  text?: string;
  html?: string;
  markdown?: string;
  svg?: string;
  png?: string;
  jpeg?: string;
  pdf?: string;
  latex?: string;
  json?: unknown;
  javascript?: string;
  /** True for the cell's last expression's value; false for `display()` calls and the figures left open. */
  isMainResult: boolean;
}

/** An exception raised by the code, as Jupyter reports it. */
export interface PythonError {
  /** Exception class name, e.g. `ZeroDivisionError`. */
  name: string;
  /** `str(exception)`. */
  value: string;
  /** The formatted traceback without the kernel's own frames. */
  traceback: string;
}

/** Answer of `POST /v1/python/run`. */
export interface PythonRunResult {
  stdout: string;
  stderr: string;
  /** `repr()` of the last expression's value when the cell ends in an expression that is not None. */
  result: string | null;
  /**
   * (1.6) The run's rich results in the order they were made: `display()` calls, then the matplotlib figures the
   * cell left open (closed afterwards), then the last expression's value. Absent from older agents.
   */
  results?: PythonRichResult[];
  error: PythonError | null;
  /** True when the deadline interrupted the code. */
  timedOut: boolean;
  /**
   * True when the interpreter had to be killed (it ignored the interrupt, or died on its own): its state is
   * gone and the next run starts a fresh one.
   */
  kernelRestarted: boolean;
  /** Counts the context's runs, like Jupyter's execution count. */
  executionCount: number;
  durationMs: number;
  /**
   * CPU time of the run: the interpreter's own plus that of child processes it waited for (`getrusage`,
   * microsecond precision). Null when the interpreter died.
   */
  cpuMs: number | null;
}

/** Body of `POST /v1/python/reset`. */
export interface PythonResetRequest {
  contextId: string;
}

/** Answer of `POST /v1/python/reset`. */
export interface PythonResetResponse {
  /** False when the context did not exist. */
  existed: boolean;
}

/** What a path names. */
export type FileType = 'file' | 'directory' | 'symlink' | 'other';

/** Metadata of one path (`lstat`: symlinks are reported, not followed). */
export interface FileStat {
  path: string;
  name: string;
  type: FileType;
  size: number;
  /** Permission bits, e.g. 0o644 = 420. */
  mode: number;
  mtimeMs: number;
  /** The link's target when `type` is `symlink`. */
  symlinkTarget?: string;
}

/** Answer of `PUT /v1/files/content`. */
export interface FileWriteResponse {
  path: string;
  size: number;
}

/** Answer of `GET /v1/files/list`. Entries are sorted by name. */
export interface FileListResponse {
  path: string;
  entries: FileStat[];
}

/** Body of `POST /v1/files/mkdir`. */
export interface MkdirRequest {
  path: string;
  /** Create missing parents and accept an existing directory (default true). */
  parents?: boolean;
  mode?: number;
}

/** Body of `POST /v1/files/transfer/in`: one chunk of an upload (chunks may arrive in any order). */
export interface TransferInRequest {
  /** The file to write. */
  path: string;
  /** The upload's id: names its temporary file. */
  id: string;
  /** Where the chunk's bytes go in the file. */
  offset: number;
  /** The chunk file's name in the share. */
  chunk: string;
  /** The final chunk: after it (and every earlier one) the file is put in place. Send it after all others succeeded. */
  last?: boolean;
  /** Permission bits (default 0o644), applied with `last`. */
  mode?: number;
  /** Create missing parent directories (default true). */
  parents?: boolean;
}

/** Answer of `POST /v1/files/transfer/in`. */
export interface TransferInResponse {
  path: string;
  /** Bytes copied from this chunk. */
  bytes: number;
  /** With `last`: the file's final size. */
  size?: number;
}

/** Body of `POST /v1/files/transfer/abort`. */
export interface TransferAbortRequest {
  path: string;
  id: string;
}

/** Body of `POST /v1/files/transfer/out`. */
export interface TransferOutRequest {
  path: string;
  /** Name of the chunk file to create (it must not exist). */
  chunk: string;
  offset: number;
  /** At most this many bytes (fewer at the end of the file). */
  length: number;
}

/** Answer of `POST /v1/files/transfer/out`. */
export interface TransferOutResponse {
  /** The file's size now. */
  size: number;
  /** Permission bits. */
  mode: number;
  /** Bytes in the chunk. */
  bytes: number;
}

/** Answer of `POST /v1/files/mkdir`. */
export interface MkdirResponse {
  path: string;
}

/** Body of `POST /v1/files/remove`. */
export interface RemoveRequest {
  path: string;
  /** Remove directories with their contents (default false: only files, symlinks and empty directories). */
  recursive?: boolean;
}

/** Answer of `POST /v1/files/remove`. */
export interface RemoveResponse {
  /** False when nothing existed at the path. */
  removed: boolean;
}

/** Answer of `POST /v1/files/extract`. */
export interface ExtractResponse {
  path: string;
  durationMs: number;
}

/** Answer of `GET /v1/usage`. CPU seconds are cumulative since guest boot. */
export interface UsageResponse {
  cpu: {
    /** Busy time summed over all vCPUs (user + nice + system + irq + softirq + steal), seconds. */
    busySeconds: number;
    userSeconds: number;
    systemSeconds: number;
    idleSeconds: number;
    count: number;
  };
  memory: {
    totalBytes: number;
    availableBytes: number;
    /** total − available: what the guest cannot give back without swapping. */
    usedBytes: number;
  };
  uptimeSeconds: number;
  loadAverage: [number, number, number];
}

/**
 * Body of `POST /v1/restore`, sent by the host right after a VM was restored from a snapshot. Besides what it
 * carries, the fix-up gives the guest a fresh `/etc/machine-id` (1.3), drawn after the entropy was credited.
 */
export interface RestoreRequest {
  /** Host wall clock in ms since the epoch, read just before sending. */
  wallClockMs: number;
  /** At least {@link MIN_RESTORE_ENTROPY_BYTES} random bytes from the host, base64; credited to the guest RNG. */
  entropy: string;
  hostname: string;
  vmId: string;
  /**
   * (1.5) The same VM coming back (a resume after a pause), not a new one: clock and entropy only; the machine id
   * and the boot id stay. Without it (a clone, a pooled VM) both are renewed, the boot id by a file bound over
   * the kernel's, since the VM the snapshot was taken of may have read it already.
   */
  keepIdentity?: boolean;
}

/** The least entropy a restore must bring. */
export const MIN_RESTORE_ENTROPY_BYTES = 64;
/** The most entropy a restore may bring (one ioctl). */
export const MAX_RESTORE_ENTROPY_BYTES = 4096;

/** Answer of `POST /v1/restore`. */
export interface RestoreResponse {
  /** False when the agent runs with system changes disabled (tests on a host). */
  applied: boolean;
  /** How far the guest clock moved (new − old), ms. */
  clockStepMs: number;
  entropyBytes: number;
  hostname: string;
  vmId: string;
  /**
   * Python interpreters (live contexts and the pre-started spare) whose random state is reseeded: queued
   * ahead of any run asked for after this answer.
   */
  reseededKernels: number;
  durationMs: number;
}

/**
 * (1.5) Body of `POST /v1/snapshot/quiesce`: the guest is about to be captured while it runs (a live snapshot or a
 * pause). Transfers through the share finish (at most `waitMs`), the share is unmounted (QEMU refuses to migrate a
 * VM with a mounted 9p share) and new transfers wait until `POST /v1/snapshot/thaw` or until `holdMs` passed.
 */
export interface QuiesceRequest {
  /** How long transfers under way may take to finish (default 10 s). */
  waitMs?: number;
  /** How long new transfers are held back at most, in case the host never thaws (default 30 s). */
  holdMs?: number;
}

/** Answer of `POST /v1/snapshot/quiesce`. */
export interface QuiesceResponse {
  /** The share was mounted and is now unmounted (it is mounted again on the next transfer). */
  unmounted: boolean;
  /** How long it waited for transfers under way. */
  waitedMs: number;
  durationMs: number;
}

/** Answer of `POST /v1/snapshot/prepare`. */
export interface SnapshotPrepareResponse {
  /** The privileged helper is running, so a restore can be fixed up in milliseconds. */
  helperReady: boolean;
  /** A Python interpreter is pre-started, so the first run in a restored clone skips interpreter start-up. */
  spareKernelReady: boolean;
  durationMs: number;
}
