/**
 * The typed client of one guest agent. Connect with the path of QEMU's chardev socket for the
 * `sandboxd.agent` port (or any connected Duplex), then call operations; each has a deadline and throws the
 * classes of `errors.ts`. The client does not log: it emits `close` when the session ends.
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { connect as connectHttp2, type ClientHttp2Session } from 'node:http2';
import { connect as connectSocket } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  formatProtocolVersion,
  isProtocolCompatible,
  PROTOCOL_VERSION,
  ROUTES,
  type ExtractResponse,
  type FileStat,
  type FileWriteResponse,
  type ExecAttachRequest,
  type HelloResponse,
  type KeptExecInfo,
  type KeptExecListResponse,
  type MkdirResponse,
  type PingResponse,
  type PtyCreateRequest,
  type PtyInfo,
  type PythonResetResponse,
  type PythonRunResult,
  type QuiesceRequest,
  type QuiesceResponse,
  type RemoveResponse,
  type RestoreRequest,
  type RestoreResponse,
  type SnapshotPrepareResponse,
  type UsageResponse,
} from '@sandboxd/agent/protocol';
import { AgentSession, DEFAULT_TIMEOUTS_MS } from './agent-session.ts';
import { Deadline, type CallOptions } from './deadline.ts';
import { AgentError, AgentProtocolError, AgentUnavailableError } from './errors.ts';
import { attachExec, startExec, type AttachExecOptions, type ExecHandle, type ExecOptions } from './exec.ts';
import * as files from './files.ts';
import { syncLink } from './link-sync.ts';
import * as pty from './pty.ts';
import { TransferLane } from './transfer.ts';
import { resetPython, runPython, type RunPythonOptions } from './python.ts';
import { openTunnel } from './tunnel.ts';

/** Where the agent is: QEMU's chardev unix socket, or an already connected stream. */
export type AgentTarget = { socketPath: string } | { stream: Duplex };

/** Options of {@link AgentClient.connect}. */
export interface ConnectOptions extends CallOptions {
  /** Default of `timeoutMs`: connecting, link sync and the hello; a cold boot under TCG needs tens of seconds. */
  timeoutMs?: number;
  /** The VM's transfer area (`VmInfo.transferDir`): large files then go through it (`transfer.ts`). */
  transferDir?: string | null;
}

/** Host side of `POST /v1/restore`; the clock and entropy are filled in when absent. */
export interface RestoreOptions extends CallOptions {
  hostname: string;
  vmId: string;
  /** Default: the host clock at sending. */
  wallClockMs?: number;
  /** Default: 256 fresh random bytes from the host. */
  entropy?: Buffer;
  /** The same VM coming back (a resume): keep its machine id and boot id (protocol 1.5). */
  keepIdentity?: boolean;
}

// Window sizes for bulk transfers over a local link (see the agent's `agent.ts`).
const STREAM_WINDOW_BYTES = 4 * 1024 * 1024;
const CONNECTION_WINDOW_BYTES = 16 * 1024 * 1024;

/** Events of an {@link AgentClient}. */
export interface AgentClientEvents {
  /** The session ended (closed by either side, the channel failed or the agent went away). */
  close: [error: Error | undefined];
}

/** A connected agent. */
export class AgentClient extends EventEmitter<AgentClientEvents> {
  private readonly session: AgentSession;
  private closing: Promise<void> | undefined;
  /** Large files' way in and out, when the VM has a transfer area and the agent serves it. */
  private readonly lane: TransferLane | undefined;

  private constructor(
    http2: ClientHttp2Session,
    /** The agent's handshake answer. */
    readonly agent: HelloResponse,
    transferDir: string | null | undefined,
    /** The channel under the session: closed with it. */
    private readonly channel: Duplex,
  ) {
    super();
    this.session = new AgentSession(http2);
    if (transferDir && agent.capabilities.includes('files-transfer')) this.lane = new TransferLane(transferDir);
  }

  /**
   * Connects: opens the channel, runs link sync, starts HTTP/2 and checks the handshake. Rejects with
   * `AgentUnavailableError` (no channel), `AgentTimeoutError` (no answer in time) or `AgentProtocolError`
   * (another protocol major).
   */
  static async connect(target: AgentTarget, options: ConnectOptions = {}): Promise<AgentClient> {
    const deadline = new Deadline('connect', options.timeoutMs ?? DEFAULT_TIMEOUTS_MS.control, options.signal);
    let channel: Duplex | undefined;
    let http2: ClientHttp2Session | undefined;
    try {
      channel = 'stream' in target ? target.stream : await deadline.race(openSocket(target.socketPath));
      await syncLink(channel, deadline);
      const connected = channel;
      http2 = connectHttp2('http://sandboxd-agent', {
        createConnection: () => connected,
        settings: { initialWindowSize: STREAM_WINDOW_BYTES, enablePush: false },
        maxSessionMemory: 64,
      });
      const session = http2;
      session.on('error', () => undefined); // reported through 'close'
      session.once('connect', () => {
        try {
          session.setLocalWindowSize(CONNECTION_WINDOW_BYTES);
        } catch {
          // Only a throughput optimisation.
        }
      });
      const hello = await new AgentSession(session).json<HelloResponse>(
        'hello',
        'GET',
        ROUTES.hello,
        undefined,
        { timeoutMs: Math.max(1, deadline.timeoutMs), signal: deadline.signal },
        0,
      );
      if (!hello || typeof hello.protocol?.major !== 'number') throw new AgentProtocolError('the agent answered the handshake with something else');
      if (!isProtocolCompatible(hello.protocol)) {
        throw new AgentProtocolError(
          `the agent speaks protocol ${formatProtocolVersion(hello.protocol)}, this host ${formatProtocolVersion(PROTOCOL_VERSION)}: rebuild the guest image with a matching agent`,
        );
      }
      const client = new AgentClient(session, hello, options.transferDir, connected);
      let failure: Error | undefined;
      session.on('error', (error) => {
        failure = error;
      });
      session.once('close', () => client.emit('close', failure));
      return client;
    } catch (error) {
      http2?.destroy();
      channel?.destroy();
      throw error instanceof AgentError ? error : new AgentUnavailableError(`connect: ${(error as Error).message}`, { cause: error });
    } finally {
      deadline.clear();
    }
  }

  /** True until the session closed. */
  get connected(): boolean {
    return this.session.open;
  }

  /** The handshake again (identity after a restore). */
  hello(options?: CallOptions): Promise<HelloResponse> {
    return this.session.json<HelloResponse>('hello', 'GET', ROUTES.hello, undefined, options, DEFAULT_TIMEOUTS_MS.control);
  }

  /** Round trip through the agent's event loop. */
  async ping(options?: CallOptions): Promise<{ rttMs: number; guestNowMs: number }> {
    const started = performance.now();
    const answer = await this.session.json<PingResponse>('ping', 'GET', ROUTES.ping, undefined, options, DEFAULT_TIMEOUTS_MS.control);
    return { rttMs: performance.now() - started, guestNowMs: answer.nowMs };
  }

  /**
   * Starts a process; see {@link ExecHandle}. Synchronous errors (session closed) throw here. `keep` on an agent
   * older than protocol 1.8 (no `exec-keep`) is dropped: the process then ends with its stream, as before.
   */
  exec(options: ExecOptions): ExecHandle {
    if (options.keep && !this.keepsExecs) {
      const { keep: _keep, info: _info, ...plain } = options;
      return startExec(this.session, plain);
    }
    return startExec(this.session, options);
  }

  /** True when the agent keeps execs that outlive their stream (protocol 1.8, capability `exec-keep`). */
  get keepsExecs(): boolean {
    return this.agent.capabilities.includes('exec-keep');
  }

  /**
   * Re-attaches to a kept exec (see `attachExec` in exec.ts): output from `from`'s offsets (or the oldest kept),
   * then live output and the exit. An agent without `exec-keep` keeps nothing: EXEC_NOT_FOUND.
   */
  attachExec(from: ExecAttachRequest, options?: AttachExecOptions): ExecHandle {
    return attachExec(this.session, from, options);
  }

  /** The kept execs of the agent (running, or ended and not collected); none on an agent without `exec-keep`. */
  async listKeptExecs(options?: CallOptions): Promise<KeptExecInfo[]> {
    if (!this.keepsExecs) return [];
    const answer = await this.session.json<KeptExecListResponse>('listKeptExecs', 'GET', ROUTES.execKept, undefined, options, DEFAULT_TIMEOUTS_MS.control);
    return answer.execs;
  }

  /** Runs Python code in a persistent per-context interpreter. */
  runPython(options: RunPythonOptions): Promise<PythonRunResult> {
    return runPython(this.session, options);
  }

  /** Ends a Python context. */
  resetPython(contextId: string, options?: CallOptions): Promise<PythonResetResponse> {
    return resetPython(this.session, contextId, options);
  }

  /** Writes a file from a buffer, string or stream. */
  writeFile(path: string, source: files.FileSource, options?: files.WriteFileOptions): Promise<FileWriteResponse> {
    return files.writeFile(this.session, path, source, options, this.lane);
  }

  /** Opens a file for streamed reading. */
  readFile(path: string, options?: CallOptions): Promise<files.FileDownload> {
    return files.readFile(this.session, path, options, this.lane);
  }

  /** Reads a small file whole. */
  readFileBytes(path: string, options?: CallOptions): Promise<Buffer> {
    return files.readFileBytes(this.session, path, options, this.lane);
  }

  stat(path: string, options?: CallOptions): Promise<FileStat> {
    return files.statPath(this.session, path, options);
  }

  listDir(path: string, options?: CallOptions): Promise<FileStat[]> {
    return files.listDir(this.session, path, options);
  }

  mkdir(path: string, options?: CallOptions & { parents?: boolean; mode?: number }): Promise<MkdirResponse> {
    return files.mkdir(this.session, path, options);
  }

  remove(path: string, options?: CallOptions & { recursive?: boolean }): Promise<RemoveResponse> {
    return files.remove(this.session, path, options);
  }

  /** Extracts a (streamed) tar archive into a guest directory. */
  extractTar(dir: string, archive: files.FileSource, options?: files.ExtractTarOptions): Promise<ExtractResponse> {
    return files.extractTar(this.session, dir, archive, options);
  }

  /** A TCP connection to `port` on the guest's loopback, as a Duplex. */
  openTunnel(port: number, options?: CallOptions): Promise<Duplex> {
    return openTunnel(this.session, port, options);
  }

  /** Starts a program on a new terminal. */
  createPty(request: PtyCreateRequest, options?: CallOptions): Promise<PtyInfo> {
    return pty.createPty(this.session, request, options);
  }

  listPtys(options?: CallOptions): Promise<PtyInfo[]> {
    return pty.listPtys(this.session, options);
  }

  getPty(id: string, options?: CallOptions): Promise<PtyInfo> {
    return pty.getPty(this.session, id, options);
  }

  resizePty(id: string, cols: number, rows: number, options?: CallOptions): Promise<PtyInfo> {
    return pty.resizePty(this.session, id, cols, rows, options);
  }

  /** Ends a terminal's program (SIGHUP, SIGKILL after 2 s) and forgets the terminal. */
  killPty(id: string, options?: CallOptions): Promise<PtyInfo> {
    return pty.killPty(this.session, id, options);
  }

  /** Attaches to a terminal: scrollback, live output and its exit to `handlers`; input and resizes back. */
  attachPty(id: string, handlers: pty.PtyHandlers, options?: CallOptions): Promise<pty.PtyStream> {
    return pty.attachPty(this.session, id, handlers, options);
  }

  /** Guest CPU, memory and uptime. */
  usage(options?: CallOptions): Promise<UsageResponse> {
    return this.session.json<UsageResponse>('usage', 'GET', ROUTES.usage, undefined, options, DEFAULT_TIMEOUTS_MS.control);
  }

  /** Fix-ups after a snapshot restore: clock, entropy (credited), hostname, VM id; reseeds pre-started interpreters. */
  restore(options: RestoreOptions): Promise<RestoreResponse> {
    const { hostname, vmId, wallClockMs, entropy, keepIdentity, timeoutMs, signal } = options;
    const body: RestoreRequest = {
      wallClockMs: wallClockMs ?? Date.now(),
      entropy: (entropy ?? randomBytes(256)).toString('base64'),
      hostname,
      vmId,
      ...(keepIdentity ? { keepIdentity } : {}),
    };
    return this.session.json<RestoreResponse>('restore', 'POST', ROUTES.restore, body, { timeoutMs, signal }, DEFAULT_TIMEOUTS_MS.control);
  }

  /**
   * Readies a running guest for a live capture (protocol 1.5): file transfers finish, the transfer share is
   * unmounted, new transfers wait for {@link thaw} (or `request.holdMs`). The link stays up.
   */
  quiesce(request: QuiesceRequest = {}, options?: CallOptions): Promise<QuiesceResponse> {
    return this.session.json<QuiesceResponse>('quiesce', 'POST', ROUTES.snapshotQuiesce, request, options, DEFAULT_TIMEOUTS_MS.control);
  }

  /** Lets transfers held back by {@link quiesce} go on. */
  async thaw(options?: CallOptions): Promise<void> {
    await this.session.json<{ thawed: boolean }>('thaw', 'POST', ROUTES.snapshotThaw, {}, options, DEFAULT_TIMEOUTS_MS.control);
  }

  /**
   * Prepares the guest for a snapshot, then closes this client: the agent is waiting for a new host, so the
   * caller disconnects, stops the VM and saves it; a restored clone then accepts `connect` at once.
   */
  async prepareSnapshot(options?: CallOptions): Promise<SnapshotPrepareResponse> {
    const answer = await this.session.json<SnapshotPrepareResponse>(
      'prepareSnapshot',
      'POST',
      ROUTES.snapshotPrepare,
      undefined,
      options,
      DEFAULT_TIMEOUTS_MS.prepare,
    );
    await this.close();
    return answer;
  }

  /** Closes the session (open streams are cancelled) and the channel. */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    const http2 = this.session.http2;
    this.closing = new Promise<void>((resolve) => {
      if (http2.destroyed) {
        resolve();
        return;
      }
      http2.once('close', () => resolve());
      http2.close();
      // Streams still open (tunnels, running execs) would keep a graceful close waiting forever; and a
      // destroyed session still waits for the peer to close its side of the channel, which a frozen guest
      // never does, so the channel goes too.
      setTimeout(() => {
        http2.destroy();
        this.channel.destroy();
      }, 1000).unref();
    });
    return this.closing;
  }
}

/** Connects a unix socket, mapping failures to AgentUnavailableError. */
function openSocket(path: string): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    const socket = connectSocket(path);
    socket.once('connect', () => {
      socket.off('error', onError);
      resolve(socket);
    });
    const onError = (error: NodeJS.ErrnoException): void => {
      reject(new AgentUnavailableError(`cannot connect to the agent socket ${path}: ${error.code ?? error.message}`, { cause: error }));
    };
    socket.once('error', onError);
  });
}
