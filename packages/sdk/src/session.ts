/**
 * A session as an object: `await client.sessions.create()` gives one; its methods act on that session. Each method
 * that sends a request takes `{ signal }` last (see `CallOptions`).
 */
import type {
  AppUrl,
  PtySession,
  ExecuteResult,
  ExecutionRecord,
  FileEntry,
  FileWatchEvent,
  KillResult,
  SessionDetails,
  SessionInfo,
  SessionStatus,
  SessionUsage,
  UploadResult,
  VmRecord,
} from './api-types.ts';
import type { CallOptions } from './call-options.ts';
import type { ExecuteOptions } from './resources/execution.ts';
import type { AsyncExecution, Executions } from './resources/executions.ts';
import type { FileToWrite, Files, MkdirOptions, RemoveOptions, RenameOptions, UploadData, UploadOptions } from './resources/files.ts';
import { SessionError } from './errors.ts';
import { SessionProcesses, type Processes } from './resources/processes.ts';
import { SessionCommands } from './resources/commands.ts';
import type { ContextCreateOptions, ContextInfo, Contexts } from './resources/contexts.ts';
import type { Sessions } from './resources/sessions.ts';
import type { Vms } from './resources/vms.ts';
import type { TerminalAttachOptions, TerminalConnection, TerminalCreateOptions, Terminals } from './resources/terminals.ts';

/** The parts of the client a Session uses. */
export interface SessionContext {
  readonly sessions: Sessions;
  readonly executions: Executions;
  readonly files: Files;
  readonly processes: Processes;
  readonly contexts: Contexts;
  readonly terminals: Terminals;
  readonly vms: Vms;
  execute(code: string, options?: ExecuteOptions & { sessionId?: string | null }): Promise<ExecuteResult>;
  executeAsync(code: string, options?: Omit<ExecuteOptions, 'throwOnError'> & { sessionId?: string | null }): Promise<AsyncExecution>;
}

export class Session {
  constructor(
    private readonly client: SessionContext,
    /** The session id (a UUID). */
    readonly id: string,
    /** What creating it answered (absent for `client.sessions.connect(id)`). */
    readonly created?: SessionInfo,
  ) {}

  /**
   * Runs code (Python by default; state survives between calls) or a command (`language: 'bash'`) and
   * waits for the result. The first call starts the session's VM.
   */
  execute(code: string, options: ExecuteOptions = {}): Promise<ExecuteResult> {
    return this.client.execute(code, { ...options, sessionId: this.id });
  }

  /** Starts a run and returns at once; `await run.wait()` polls its record once a second. */
  executeAsync(code: string, options: Omit<ExecuteOptions, 'throwOnError'> = {}): Promise<AsyncExecution> {
    return this.client.executeAsync(code, { ...options, sessionId: this.id });
  }

  /** Writes a file into the VM (`recursive: true` unpacks a tar archive there). */
  upload(data: UploadData, remotePath: string, options: UploadOptions = {}): Promise<UploadResult> {
    return this.client.files.upload(this.id, data, remotePath, options);
  }

  /** Writes several files into the VM in one call (parents made, what was there replaced); answers each path and size. */
  writeFiles(files: FileToWrite[], options: { signal?: AbortSignal } = {}): Promise<{ path: string; size: number }[]> {
    return this.client.files.write(this.id, files, options);
  }

  /** Reads a file from the VM, whole in memory (large files: `downloadStream`). */
  download(remotePath: string, options: { signal?: AbortSignal } = {}): Promise<Uint8Array> {
    return this.client.files.download(this.id, remotePath, options);
  }

  /** Reads a file from the VM as a stream, for any size (see `client.files.downloadStream`). */
  downloadStream(remotePath: string, options: { signal?: AbortSignal } = {}): Promise<ReadableStream<Uint8Array>> {
    return this.client.files.downloadStream(this.id, remotePath, options);
  }

  /** Changes under a directory of the VM as they happen, until you leave the loop (see `client.files.watch`). */
  watch(remotePath: string, options: { recursive?: boolean; signal?: AbortSignal } = {}): AsyncGenerator<FileWatchEvent> {
    return this.client.files.watch(this.id, remotePath, options);
  }

  /** What is at a path in the VM (type, size, mode, modified_at; symlinks not followed). Nothing there: NotFoundError. */
  stat(remotePath: string, options: { signal?: AbortSignal } = {}): Promise<FileEntry> {
    return this.client.files.stat(this.id, remotePath, options);
  }

  /** Whether anything is at a path in the VM. */
  exists(remotePath: string, options: { signal?: AbortSignal } = {}): Promise<boolean> {
    return this.client.files.exists(this.id, remotePath, options);
  }

  /** Makes a directory in the VM (with its parents unless `parents: false`); false when it was already there. */
  mkdir(remotePath: string, options: MkdirOptions = {}): Promise<boolean> {
    return this.client.files.mkdir(this.id, remotePath, options);
  }

  /** Removes a file or an empty directory in the VM (`recursive: true`: a whole tree); false when nothing was there. */
  remove(remotePath: string, options: RemoveOptions = {}): Promise<boolean> {
    return this.client.files.remove(this.id, remotePath, options);
  }

  /** Moves a file or directory in the VM to the path `to`; answers what is there then. */
  rename(from: string, to: string, options: RenameOptions = {}): Promise<FileEntry> {
    return this.client.files.rename(this.id, from, to, options);
  }

  /** Background processes in the session's VM: `start`, `run` (output as it arrives), `output`, `sendStdin`, `signal`, `kill`. */
  get processes(): SessionProcesses {
    return new SessionProcesses(this.client.processes, this.id);
  }

  /**
   * Commands in the session's VM as E2B's `sandbox.commands` has them: `run(cmd, { onStdout, background… })` waits
   * for the end (a non-zero exit rejects with CommandExitError) or answers a `CommandHandle` (`wait`, `kill`,
   * `sendStdin`, `disconnect`); `connect`, `list`, `kill`, `sendStdin` by process id.
   */
  get commands(): SessionCommands {
    return new SessionCommands(this.client.processes, this.id);
  }

  /**
   * Makes a Python context: an interpreter of its own in the VM, with its own variables (E2B's
   * `createCodeContext`). Run in it with `execute(code, { contextId: context.id })`.
   */
  createContext(options: ContextCreateOptions = {}): Promise<ContextInfo> {
    return this.client.contexts.create(this.id, options);
  }

  /** The session's Python contexts, `default` first. */
  listContexts(options: { signal?: AbortSignal } = {}): Promise<ContextInfo[]> {
    return this.client.contexts.list(this.id, options);
  }

  /** Clears a context's state (its interpreter ends; the next run starts afresh); `default` too. */
  restartContext(contextId: string, options: { signal?: AbortSignal } = {}): Promise<ContextInfo> {
    return this.client.contexts.restart(this.id, contextId, options);
  }

  /** Deletes a context you made and ends its interpreter. */
  deleteContext(contextId: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    return this.client.contexts.delete(this.id, contextId, options);
  }

  /** Session and VM status: `vm_alive`, `vm_status`, `expires_in_seconds`… */
  status(options: CallOptions = {}): Promise<SessionStatus> {
    return this.client.sessions.status(this.id, options);
  }

  /**
   * The session's current VM now ends `timeoutMs` from now, sooner or later than it would have (E2B's
   * `setTimeout`; rounded up to whole seconds, at most 30 days); answers the VM's record with its new `expires_at`.
   * A VM the session starts later gets the session's `vm_lifetime_seconds` again. No VM running: SessionError.
   */
  async setTimeout(timeoutMs: number, options: CallOptions = {}): Promise<VmRecord> {
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new RangeError(`timeoutMs must be a positive number of milliseconds, got ${timeoutMs}`);
    const status = await this.client.sessions.status(this.id, options);
    if (!status.vm_id || !status.vm_alive)
      throw new SessionError(`session ${this.id} has no running VM whose timeout could be set (run something in it first)`);
    return this.client.vms.setTimeout(status.vm_id, timeoutMs, options);
  }

  /** Settings, metadata, env names and the current VM. */
  details(options: CallOptions = {}): Promise<SessionDetails> {
    return this.client.sessions.info(this.id, options);
  }

  usage(options: CallOptions = {}): Promise<SessionUsage> {
    return this.client.sessions.usage(this.id, options);
  }

  /** Kills the session's VM (the session stays; the next execute starts a new VM). */
  kill(options: CallOptions = {}): Promise<KillResult> {
    return this.client.sessions.kill(this.id, options);
  }

  /**
   * `await using session = await client.sessions.create()`: the session's VM is killed when the block ends, however
   * it ends (a VM that is already gone is fine).
   */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.kill().catch((error: unknown) => {
      if (!(error instanceof SessionError)) throw error;
    });
  }

  appUrl(port = 80, options: CallOptions = {}): Promise<AppUrl> {
    return this.client.sessions.appUrl(this.id, port, options);
  }

  /** Starts a terminal in the session's VM (starting the VM if needed); `attachTerminal` connects to it. */
  createTerminal(options: TerminalCreateOptions = {}): Promise<PtySession> {
    return this.client.terminals.create({ sessionId: this.id }, options);
  }

  /** Attaches to one of the session's terminals over a WebSocket. */
  attachTerminal(ptyId: string, options: TerminalAttachOptions = {}): Promise<TerminalConnection> {
    return this.client.terminals.attach({ sessionId: this.id }, ptyId, options);
  }

  /** This session's execution records, newest first. */
  executions(options: { limit?: number; offset?: number } & CallOptions = {}): Promise<ExecutionRecord[]> {
    return this.client.executions.list({ ...options, sessionId: this.id });
  }
}
