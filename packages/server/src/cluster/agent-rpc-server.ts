/**
 * The answering half of the agent RPC (agent-rpc-client.ts sends): runs one operation another node asked for on
 * the real agent of a VM this node runs, streaming its answer back on the operation's WebSocket (the wire:
 * agent-rpc-messages.ts). The internal listener's upgrade handler (api/internal/agent-rpc-upgrade.ts) has checked
 * the handshake's signature and that the arguments message is the signed one before this runs.
 */
import type { Duplex, Readable } from 'node:stream';
import WebSocket, { createWebSocketStream } from 'ws';
import type { ExecRequest } from '@sandboxd/agent/protocol';
import {
  ExecSignals,
  SENDABLE_SIGNALS,
  type GuestAgent,
  type KeptExecOffsets,
  type PtyAttachment,
  type PtyCreateOptions,
  type SendableSignal,
} from '../core/vm-engine.ts';
import { checkAgentArgs, type AgentOp } from './agent-rpc-args.ts';
import { binaryReadable, errorMessage, pump, STDERR, STDOUT, type Message } from './agent-rpc-messages.ts';

/** The arguments the client side sends, once checked against the op's schema (each operation uses its own). */
interface OpArgs {
  path: string;
  directory: string;
  options: { mode?: number; gzip?: boolean; parents?: boolean; recursive?: boolean };
  port: number;
  id: string;
  cols: number;
  rows: number;
  contextId: string;
  pid: number;
  from: KeptExecOffsets;
  stdin: boolean;
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
    case 'exec':
    case 'attachExec': {
      const aborted = new AbortController();
      socket.once('close', () => aborted.abort());
      const channel = (kind: number) => (chunk: Buffer) =>
        socket.readyState === WebSocket.OPEN && socket.send(Buffer.concat([Buffer.from([kind]), chunk]), { binary: true });
      const wantsStdin = op === 'exec' ? (input as ExecRequest).stdin === true : args.stdin;
      let stdin: Readable | undefined;
      if (wantsStdin) {
        stdin = binaryReadable(socket);
        const body = stdin;
        socket.on('message', (data: Buffer, isBinary) => !isBinary && (JSON.parse(data.toString()) as Message).type === 'end' && body.push(null));
      }
      // Signals the client sends while the program runs; a name outside the sendable ones is ignored here (the
      // client's service checked it; this is the owner's own guard).
      const signals = new ExecSignals();
      socket.on('message', (data: Buffer, isBinary) => {
        if (isBinary) return;
        const message = JSON.parse(data.toString()) as Message;
        if (message.type === 'signal' && (SENDABLE_SIGNALS as readonly string[]).includes(message.signal)) signals.send(message.signal as SendableSignal);
      });
      const output = {
        onStdout: channel(STDOUT),
        onStderr: channel(STDERR),
        onStarted: (pid: number, from?: KeptExecOffsets) => send({ type: 'started', pid, ...(from ? { from } : {}) }),
      };
      return answer(() =>
        op === 'exec'
          ? agent.exec(input as ExecRequest, output, aborted.signal, stdin, signals)
          : agent.attachExec(args.pid, args.from, output, aborted.signal, stdin, signals),
      );
    }
    case 'listKeptExecs':
      return answer(() => agent.listKeptExecs());
    case 'runPython': {
      const aborted = new AbortController();
      socket.once('close', () => aborted.abort());
      // Output goes as it comes, on the binary channels exec uses; a client that did not ask ignores the frames.
      const channel = (kind: number) => (chunk: Buffer) =>
        socket.readyState === WebSocket.OPEN && socket.send(Buffer.concat([Buffer.from([kind]), chunk]), { binary: true });
      return answer(() =>
        agent.runPython(input as Parameters<GuestAgent['runPython']>[0], aborted.signal, { onStdout: channel(STDOUT), onStderr: channel(STDERR) }),
      );
    }
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
    case 'resetPython':
      return answer(() => agent.resetPython(args.contextId));
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
