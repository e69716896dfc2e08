/**
 * A VM's guest agent reached through the node that runs it. A request for a VM on another node is served here
 * exactly as for a local one: the core asks `GuestAgent` for the operation, and `RemoteGuestAgent` carries it to
 * the owner, whose `serveAgentRpc` runs it on the real agent. So execute, files, previews, terminals, the
 * computer-use proxy and the VNC relay all work through any node, with the owner's answers and errors, and the
 * client cannot tell which node answered. (The alternative, proxying whole HTTP requests, would have to know
 * each route's way of naming its session before the body is read, multipart uploads included.)
 *
 * Each operation is one WebSocket to the owner's internal endpoint (on its internal listener, signed with the
 * cluster secret for that node, see internal-auth.ts): the operation's arguments as the first text message, whose
 * sha256 the handshake's signature covers (the owner runs only the arguments that were signed, checked against
 * the op's schema, agent-rpc-args.ts), streamed bytes as binary messages, control and results as JSON text
 * messages. WebSockets because several operations stream both ways (a tunnel,
 * a terminal, an upload with its answer) and `ws` is already the server's WebSocket library.
 */
import { Readable, type Duplex } from 'node:stream';
import WebSocket, { createWebSocketStream } from 'ws';
import type { ExecRequest, ExecResult, PtyExit } from '@sandboxd/agent/protocol';
import { AppError, type ErrorCode } from '../errors.ts';
import { checkAgentArgs, type AgentOp } from './agent-rpc-args.ts';
import type { ExecOutput, GuestAgent, PtyAttachment, PtyCreateOptions, PtyOutput } from '../vm-engine.ts';
import type { InternalAuth } from './internal-auth.ts';

export const AGENT_RPC_PATH = '/internal/v1/agent';

export { AGENT_OPS, type AgentOp } from './agent-rpc-args.ts';

/** Control messages (text frames). */
type Message =
  | { type: 'result'; value: unknown }
  | { type: 'error'; code: string; message: string }
  | { type: 'file'; size: number; mode: number }
  | { type: 'end' }
  | { type: 'open' }
  | { type: 'exit'; exit: PtyExit }
  | { type: 'resize'; cols: number; rows: number };

/** Exec output channels: the first byte of each binary message (stdin goes the other way, as plain binary messages). */
const STDOUT = 1;
const STDERR = 2;

function errorMessage(error: unknown): Message {
  if (error instanceof AppError) return { type: 'error', code: error.code, message: error.message };
  return { type: 'error', code: 'VM_AGENT_UNAVAILABLE', message: `on the VM's node: ${(error as Error).message}` };
}

function toError(message: { code: string; message: string }): AppError {
  return new AppError(message.code as ErrorCode, message.message);
}

/** Sends a Readable's bytes as binary messages, waiting for each to be written (the socket's backpressure). */
async function pump(source: Readable, socket: WebSocket): Promise<void> {
  for await (const chunk of source) {
    await new Promise<void>((resolve, reject) => socket.send(chunk as Buffer, { binary: true }, (error) => (error ? reject(error) : resolve())));
  }
}

/** The bytes of binary messages as a Readable that pauses the socket while its reader is behind. */
function binaryReadable(socket: WebSocket): Readable {
  const readable = new Readable({ read: () => socket.isPaused && socket.resume() });
  socket.on('message', (data: Buffer, isBinary) => {
    if (isBinary && !readable.push(data)) socket.pause();
  });
  return readable;
}

// ---------------------------------------------------------------------------------------------------- client

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

  async exec(request: ExecRequest, output: ExecOutput, signal?: AbortSignal, stdin?: Readable): Promise<ExecResult> {
    const socket = await this.open('exec', { ...request, stdin: stdin !== undefined });
    // Aborting closes the socket: the owner aborts the run (its own signal), as a local abort would.
    const abort = () => socket.close();
    signal?.addEventListener('abort', abort, { once: true });
    try {
      const result = this.settle<ExecResult>(socket, undefined, (data) => (data[0] === STDOUT ? output.onStdout : output.onStderr)(data.subarray(1)));
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

  runPython(request: Parameters<GuestAgent['runPython']>[0]) {
    return this.unary<Awaited<ReturnType<GuestAgent['runPython']>>>('runPython', request);
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

// ---------------------------------------------------------------------------------------------------- server

/** The arguments the client side sends, once checked against the op's schema (each operation uses its own). */
interface OpArgs {
  path: string;
  directory: string;
  options: { mode?: number; gzip?: boolean; parents?: boolean; recursive?: boolean };
  port: number;
  id: string;
  cols: number;
  rows: number;
}

/**
 * Runs operation `op` on the owner's real agent, answering on `socket`. `received` is its arguments message,
 * already checked against the handshake's signature; arguments that are not the op's shape are refused (an
 * `error` message, then the socket closes) before the agent sees them.
 */
export async function serveAgentRpc(socket: WebSocket, agent: GuestAgent, op: AgentOp, received: unknown): Promise<void> {
  const send = (message: Message) => socket.readyState === WebSocket.OPEN && socket.send(JSON.stringify(message));
  let input: unknown;
  try {
    input = checkAgentArgs(op, received);
  } catch (error) {
    send({ type: 'error', code: 'BAD_REQUEST', message: `on the VM's node: ${(error as Error).message}` });
    socket.close(1008);
    return;
  }
  const args = input as OpArgs;
  const answer = async (work: () => Promise<unknown>) => {
    try {
      send({ type: 'result', value: (await work()) ?? null });
    } catch (error) {
      send(errorMessage(error));
    }
  };
  switch (op) {
    case 'exec': {
      const aborted = new AbortController();
      socket.once('close', () => aborted.abort());
      const channel = (kind: number) => (chunk: Buffer) => socket.readyState === WebSocket.OPEN && socket.send(Buffer.concat([Buffer.from([kind]), chunk]), { binary: true });
      const request = input as ExecRequest;
      let stdin: Readable | undefined;
      if (request.stdin) {
        stdin = binaryReadable(socket);
        const body = stdin;
        socket.on('message', (data: Buffer, isBinary) => !isBinary && (JSON.parse(data.toString()) as Message).type === 'end' && body.push(null));
      }
      return answer(() => agent.exec(request, { onStdout: channel(STDOUT), onStderr: channel(STDERR) }, aborted.signal, stdin));
    }
    case 'runPython':
      return answer(() => agent.runPython(input as Parameters<GuestAgent['runPython']>[0]));
    case 'writeFile':
    case 'extractTar': {
      const body = binaryReadable(socket);
      socket.on('message', (data: Buffer, isBinary) => !isBinary && (JSON.parse(data.toString()) as Message).type === 'end' && body.push(null));
      socket.once('close', () => body.readableEnded || body.destroy(new Error('the sending node went away mid-upload')));
      return answer(() => (op === 'writeFile' ? agent.writeFile(args.path, body, args.options) : agent.extractTar(args.directory, body, args.options)));
    }
    case 'readFile': {
      try {
        const file = await agent.readFile(args.path);
        send({ type: 'file', size: file.size, mode: file.mode });
        await pump(file.stream, socket);
        send({ type: 'end' });
      } catch (error) {
        send(errorMessage(error));
      }
      return;
    }
    case 'stat':
      return answer(() => agent.stat(args.path));
    case 'listDir':
      return answer(() => agent.listDir(args.path));
    case 'mkdir':
      return answer(() => agent.mkdir(args.path, args.options));
    case 'remove':
      return answer(() => agent.remove(args.path, args.options));
    case 'usage':
      return answer(() => agent.usage());
    case 'openTunnel': {
      let tunnel: Duplex;
      try {
        tunnel = await agent.openTunnel(args.port);
      } catch (error) {
        send(errorMessage(error));
        socket.close();
        return;
      }
      send({ type: 'open' });
      const stream = createWebSocketStream(socket, { allowHalfOpen: false });
      stream.pipe(tunnel).pipe(stream);
      const end = () => (tunnel.destroy(), stream.destroy());
      tunnel.once('close', end).once('error', end);
      stream.once('close', end).once('error', end);
      return;
    }
    case 'createPty':
      return answer(() => agent.createPty(input as PtyCreateOptions));
    case 'listPtys':
      return answer(() => agent.listPtys());
    case 'getPty':
      return answer(() => agent.getPty(args.id));
    case 'resizePty':
      return answer(() => agent.resizePty(args.id, args.cols, args.rows));
    case 'killPty':
      return answer(() => agent.killPty(args.id));
    case 'attachPty': {
      let attachment: PtyAttachment;
      try {
        attachment = await agent.attachPty(args.id, {
          onOutput: (chunk) => socket.readyState === WebSocket.OPEN && socket.send(chunk, { binary: true }),
          onExit: (exit) => send({ type: 'exit', exit }),
        });
      } catch (error) {
        send(errorMessage(error));
        socket.close();
        return;
      }
      send({ type: 'open' });
      socket.on('message', (data: Buffer, isBinary) => {
        if (isBinary) return attachment.write(data);
        const message = JSON.parse(data.toString()) as Message;
        if (message.type === 'resize') attachment.resize(message.cols, message.rows);
      });
      socket.once('close', () => attachment.detach());
      void attachment.closed.then(() => socket.close());
      return;
    }
  }
}

