/**
 * The agent RPC's wire (agent-rpc-client.ts sends, agent-rpc-server.ts answers): a VM's guest agent reached through
 * the node that runs it, one WebSocket per operation on the owner's internal listener, signed with the cluster
 * secret for that node (core/cluster/internal-auth.ts). The operation's arguments are the first text message,
 * whose sha256 the handshake's signature covers (the owner runs only the arguments that were signed, checked
 * against the op's schema, agent-rpc-args.ts); streamed bytes travel as binary messages, control and results as
 * the JSON text messages below. WebSockets because several operations stream both ways (a tunnel, a terminal, an
 * upload with its answer) and `ws` is already the server's WebSocket library.
 */
import { Readable } from 'node:stream';
import type WebSocket from 'ws';
import type { PtyExit } from '@sandboxd/agent/protocol';
import { AppError, type ErrorCode } from '../core/errors.ts';

/** Where each operation's WebSocket opens on the owner's internal listener: `${AGENT_RPC_PATH}/{vm_id}/{op}`. */
export const AGENT_RPC_PATH = '/internal/v1/agent';

/** Control messages (text frames). */
export type Message =
  | { type: 'result'; value: unknown }
  | { type: 'error'; code: string; message: string }
  | { type: 'file'; size: number; mode: number }
  | { type: 'end' }
  | { type: 'open' }
  | { type: 'exit'; exit: PtyExit }
  | { type: 'resize'; cols: number; rows: number }
  /** A signal for a running exec's process group (the exec op's client sends it). */
  | { type: 'signal'; signal: string }
  /** The exec's program runs (the owner sends it); `from`: where a kept exec's stream starts in its output. */
  | { type: 'started'; pid: number; from?: { stdoutOffset: number; stderrOffset: number } };

/** Exec output channels: the first byte of each binary message (stdin goes the other way, as plain binary messages). */
export const STDOUT = 1;
export const STDERR = 2;

/** An error as the owner reports it: an AppError keeps its code, anything else is the agent being unavailable. */
export function errorMessage(error: unknown): Message {
  if (error instanceof AppError) return { type: 'error', code: error.code, message: error.message };
  return { type: 'error', code: 'VM_AGENT_UNAVAILABLE', message: `on the VM's node: ${(error as Error).message}` };
}

/** The owner's error message as the AppError it was. */
export function toError(message: { code: string; message: string }): AppError {
  return new AppError(message.code as ErrorCode, message.message);
}

/** Sends a Readable's bytes as binary messages, waiting for each to be written (the socket's backpressure). */
export async function pump(source: Readable, socket: WebSocket): Promise<void> {
  for await (const chunk of source) {
    await new Promise<void>((resolve, reject) => socket.send(chunk as Buffer, { binary: true }, (error) => (error ? reject(error) : resolve())));
  }
}

/** The bytes of binary messages as a Readable that pauses the socket while its reader is behind. */
export function binaryReadable(socket: WebSocket): Readable {
  const readable = new Readable({ read: () => socket.isPaused && socket.resume() });
  socket.on('message', (data: Buffer, isBinary) => {
    if (isBinary && !readable.push(data)) socket.pause();
  });
  return readable;
}
