/**
 * The sending half of the agent RPC: a VM's guest agent reached through the node that runs it. A request for a
 * VM on another node is served here exactly as for a local one: the core asks `GuestAgent` for the operation, and `RemoteGuestAgent` carries it to
 * the owner, whose `serveAgentRpc` runs it on the real agent. So execute, files, previews, terminals, the
 * computer-use proxy and the VNC relay all work through any node, with the owner's answers and errors, and the
 * client cannot tell which node answered. (The alternative, proxying whole HTTP requests, would have to know
 * each route's way of naming its session before the body is read, multipart uploads included.)
 *
 * Each operation is one WebSocket to the owner's internal listener (the wire: agent-rpc-messages.ts).
 */
import type { Duplex, Readable } from 'node:stream';
import WebSocket, { createWebSocketStream } from 'ws';
import type { ExecRequest, ExecResult } from '@sandboxd/agent/protocol';
import { AppError, type ErrorCode } from '../core/errors.ts';
import type { InternalAuth } from '../core/cluster/internal-auth.ts';
import type { ExecOutput, ExecSignals, GuestAgent, KeptExecOffsets, PtyAttachment, PtyCreateOptions, PtyOutput, PythonOutput } from '../core/vm-engine.ts';
import type { AgentOp } from './agent-rpc-args.ts';
import { AGENT_RPC_PATH, binaryReadable, pump, STDOUT, toError, type Message } from './agent-rpc-messages.ts';

/** The agent of VM `vmId` on the node at `baseUrl`, as the core's GuestAgent. */
export class RemoteGuestAgent implements GuestAgent {
  /**
   * `nodeId`: the owner (every request is signed for it alone); `baseUrl`: its internal URL, looked up when an
   * operation starts (a node's address may change on restart).
   */
  constructor(
    private readonly auth: InternalAuth,
    private readonly nodeId: string,
    private readonly baseUrl: () => Promise<string>,
    private readonly vmId: string,
  ) {}

  /** Opens the operation's WebSocket and sends its arguments; rejects with the owner's refusal. */
  private async open(op: AgentOp, args: unknown): Promise<WebSocket> {
    const path = `${AGENT_RPC_PATH}/${encodeURIComponent(this.vmId)}/${op}`;
    const baseUrl = await this.baseUrl();
    const url = new URL(path, baseUrl.replace(/^http/, 'ws'));
    // The arguments are the handshake's signed body: a captured handshake cannot run other arguments.
    const message = JSON.stringify(args ?? null);
    const headers = this.auth.sign({ method: 'GET', pathWithQuery: path, destination: this.nodeId, body: message });
    const socket = new WebSocket(url, { headers, perMessageDeflate: false, maxPayload: 64 * 2 ** 20 });
    return new Promise((resolve, reject) => {
      socket.once('open', () => {
        socket.send(message);
        resolve(socket);
      });
      socket.once('unexpected-response', (_request, response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk));
        response.on('end', () => {
          try {
            const parsed = JSON.parse(body) as { code: string; detail: string };
            reject(new AppError(parsed.code as ErrorCode, parsed.detail));
          } catch {
            reject(new AppError('VM_AGENT_UNAVAILABLE', `the VM's node answered ${response.statusCode}`));
          }
        });
      });
      socket.once('error', (error) => reject(new AppError('VM_AGENT_UNAVAILABLE', `the VM's node (${baseUrl}) cannot be reached: ${error.message}`)));
    });
  }

  /** Resolves with the `result` message; `onMessage` sees every other text message first. */
  private settle<T>(socket: WebSocket, onMessage?: (message: Message) => void, onBinary?: (data: Buffer) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let done = false;
      socket.on('message', (data: Buffer, isBinary) => {
        if (isBinary) return onBinary?.(data);
        const message = JSON.parse(data.toString()) as Message;
        if (message.type === 'result') {
          done = true;
          resolve(message.value as T);
          socket.close();
        } else if (message.type === 'error') {
          done = true;
          reject(toError(message));
          socket.close();
        } else onMessage?.(message);
      });
      socket.once('close', () => done || reject(new AppError('VM_AGENT_UNAVAILABLE', "the connection to the VM's node closed before the answer")));
      socket.once('error', () => undefined);
    });
  }

  private async unary<T>(op: AgentOp, args: unknown): Promise<T> {
    const socket = await this.open(op, args);
    return this.settle<T>(socket);
  }

  exec(request: ExecRequest, output: ExecOutput, signal?: AbortSignal, stdin?: Readable, signals?: ExecSignals): Promise<ExecResult> {
    return this.streamExec('exec', { ...request, stdin: stdin !== undefined }, output, signal, stdin, signals);
  }

  attachExec(pid: number, from: KeptExecOffsets, output: ExecOutput, signal?: AbortSignal, stdin?: Readable, signals?: ExecSignals): Promise<ExecResult> {
    return this.streamExec('attachExec', { pid, from, stdin: stdin !== undefined }, output, signal, stdin, signals);
  }

  listKeptExecs() {
    return this.unary<Awaited<ReturnType<GuestAgent['listKeptExecs']>>>('listKeptExecs', null);
  }

  /** An exec stream through the owner: output and the start back, stdin, signals and the end of stdin there. */
  private async streamExec(
    op: 'exec' | 'attachExec',
    args: unknown,
    output: ExecOutput,
    signal?: AbortSignal,
    stdin?: Readable,
    signals?: ExecSignals,
  ): Promise<ExecResult> {
    const socket = await this.open(op, args);
    signals?.attach((name) => socket.readyState === WebSocket.OPEN && socket.send(JSON.stringify({ type: 'signal', signal: name } satisfies Message)));
    // Aborting closes the socket: the owner aborts the run (its own signal), as a local abort would.
    const abort = () => socket.close();
    signal?.addEventListener('abort', abort, { once: true });
    try {
      const result = this.settle<ExecResult>(
        socket,
        (message) => message.type === 'started' && output.onStarted?.(message.pid, message.from),
        (data) => (data[0] === STDOUT ? output.onStdout : output.onStderr)(data.subarray(1)),
      );
      if (stdin) {
        void pump(stdin, socket)
          .then(() => socket.readyState === WebSocket.OPEN && socket.send(JSON.stringify({ type: 'end' } satisfies Message)))
          .catch(() => undefined);
      }
      return await result;
    } finally {
      signal?.removeEventListener('abort', abort);
      if (stdin && !stdin.destroyed) stdin.destroy();
    }
  }

  async runPython(request: Parameters<GuestAgent['runPython']>[0], signal?: AbortSignal, output?: PythonOutput) {
    const socket = await this.open('runPython', request);
    // Aborting closes the socket: the owner gives up on the run (its own signal), as a local abort would.
    const abort = () => socket.close();
    signal?.addEventListener('abort', abort, { once: true });
    try {
      return await this.settle<Awaited<ReturnType<GuestAgent['runPython']>>>(
        socket,
        undefined,
        output ? (data) => (data[0] === STDOUT ? output.onStdout : output.onStderr)(data.subarray(1)) : undefined,
      );
    } finally {
      signal?.removeEventListener('abort', abort);
    }
  }

  private async upload<T>(op: 'writeFile' | 'extractTar', args: unknown, body: Readable): Promise<T> {
    const socket = await this.open(op, args);
    const answer = this.settle<T>(socket);
    try {
      await pump(body, socket);
      socket.send(JSON.stringify({ type: 'end' } satisfies Message));
    } catch (error) {
      // The owner may have answered (e.g. refused the path) and closed: that answer wins.
      socket.close();
      await answer;
      throw error;
    }
    return answer;
  }

  writeFile(path: string, body: Readable, options: { mode?: number } = {}) {
    return this.upload<Awaited<ReturnType<GuestAgent['writeFile']>>>('writeFile', { path, options }, body);
  }

  extractTar(directory: string, body: Readable, options: { gzip?: boolean } = {}) {
    return this.upload<Awaited<ReturnType<GuestAgent['extractTar']>>>('extractTar', { directory, options }, body);
  }

  async readFile(path: string): Promise<{ size: number; mode: number; stream: Readable }> {
    const socket = await this.open('readFile', { path });
    return new Promise((resolve, reject) => {
      const stream = binaryReadable(socket);
      socket.on('message', (data: Buffer, isBinary) => {
        if (isBinary) return;
        const message = JSON.parse(data.toString()) as Message;
        if (message.type === 'file') resolve({ size: message.size, mode: message.mode, stream });
        else if (message.type === 'end') {
          stream.push(null);
          socket.close();
        } else if (message.type === 'error') {
          const error = toError(message);
          reject(error);
          stream.destroy(error);
        }
      });
      socket.once('close', () => {
        if (!stream.readableEnded) stream.destroy(new AppError('VM_AGENT_UNAVAILABLE', "the connection to the VM's node closed mid-file"));
        reject(new AppError('VM_AGENT_UNAVAILABLE', "the connection to the VM's node closed before the file opened"));
      });
    });
  }

  stat(path: string) {
    return this.unary<Awaited<ReturnType<GuestAgent['stat']>>>('stat', { path });
  }

  listDir(path: string) {
    return this.unary<Awaited<ReturnType<GuestAgent['listDir']>>>('listDir', { path });
  }

  async mkdir(path: string, options: { parents?: boolean; mode?: number } = {}) {
    await this.unary('mkdir', { path, options });
  }

  remove(path: string, options: { recursive?: boolean } = {}) {
    return this.unary<boolean>('remove', { path, options });
  }

  resetPython(contextId: string) {
    return this.unary<Awaited<ReturnType<GuestAgent['resetPython']>>>('resetPython', { contextId });
  }

  usage() {
    return this.unary<Awaited<ReturnType<GuestAgent['usage']>>>('usage', null);
  }

  async openTunnel(port: number): Promise<Duplex> {
    const socket = await this.open('openTunnel', { port });
    await new Promise<void>((resolve, reject) => {
      const onMessage = (data: Buffer, isBinary: boolean) => {
        if (isBinary) return;
        const message = JSON.parse(data.toString()) as Message;
        socket.off('message', onMessage);
        if (message.type === 'open') resolve();
        else if (message.type === 'error') reject(toError(message));
      };
      socket.on('message', onMessage);
      socket.once('close', () => reject(new AppError('APP_PORT_UNREACHABLE', `port ${port} could not be opened on the VM's node`)));
    });
    // From here on the WebSocket carries only the connection's bytes.
    return createWebSocketStream(socket, { allowHalfOpen: false });
  }

  createPty(options: PtyCreateOptions) {
    return this.unary<Awaited<ReturnType<GuestAgent['createPty']>>>('createPty', options);
  }

  listPtys() {
    return this.unary<Awaited<ReturnType<GuestAgent['listPtys']>>>('listPtys', null);
  }

  getPty(id: string) {
    return this.unary<Awaited<ReturnType<GuestAgent['getPty']>>>('getPty', { id });
  }

  resizePty(id: string, cols: number, rows: number) {
    return this.unary<Awaited<ReturnType<GuestAgent['resizePty']>>>('resizePty', { id, cols, rows });
  }

  killPty(id: string) {
    return this.unary<Awaited<ReturnType<GuestAgent['killPty']>>>('killPty', { id });
  }

  async attachPty(id: string, output: PtyOutput): Promise<PtyAttachment> {
    const socket = await this.open('attachPty', { id });
    await new Promise<void>((resolve, reject) => {
      socket.on('message', (data: Buffer, isBinary) => {
        if (isBinary) return output.onOutput(data);
        const message = JSON.parse(data.toString()) as Message;
        if (message.type === 'open') resolve();
        else if (message.type === 'exit') output.onExit(message.exit);
        else if (message.type === 'error') reject(toError(message));
      });
      socket.once('close', () => reject(new AppError('VM_AGENT_UNAVAILABLE', "the connection to the VM's node closed before the terminal attached")));
    });
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    return {
      write: (data) => socket.readyState === WebSocket.OPEN && socket.send(data, { binary: true }),
      resize: (cols, rows) => socket.readyState === WebSocket.OPEN && socket.send(JSON.stringify({ type: 'resize', cols, rows } satisfies Message)),
      detach: () => socket.close(),
      closed,
    };
  }
}
