/**
 * Terminals in the guest: start, list, inspect, resize and kill them (JSON calls), and attach to one (a
 * framed duplex stream that stays open as long as the host watches).
 */
import { constants } from 'node:http2';
import {
  decodeJsonPayload,
  encodeFrame,
  encodeJsonFrame,
  FrameDecoder,
  FrameType,
  ROUTES,
  type PtyCreateRequest,
  type PtyExit,
  type PtyInfo,
  type PtyListResponse,
} from '@sandboxd/agent/protocol';
import { DEFAULT_TIMEOUTS_MS, type AgentSession } from './agent-session.ts';
import type { CallOptions } from './deadline.ts';
import { errorFromAgentAnswer } from './errors.ts';

/** Where an attachment delivers output. */
export interface PtyHandlers {
  onOutput(chunk: Buffer): void;
  onExit(exit: PtyExit): void;
}

/** An open attachment. */
export interface PtyStream {
  write(data: Buffer): void;
  resize(cols: number, rows: number): void;
  /** Closes the stream; the terminal keeps running. */
  detach(): void;
  /** Resolves when the stream closed, for whatever reason. */
  readonly closed: Promise<void>;
}

/** Terminal kills wait up to the agent's SIGHUP→SIGKILL grace, so they get more than a control call. */
const KILL_TIMEOUT_MS = DEFAULT_TIMEOUTS_MS.control + 5_000;

const query = (id: string) => `?id=${encodeURIComponent(id)}`;

export function createPty(session: AgentSession, request: PtyCreateRequest, options?: CallOptions): Promise<PtyInfo> {
  return session.json<PtyInfo>('createPty', 'POST', ROUTES.pty, request, options, DEFAULT_TIMEOUTS_MS.control);
}

export async function listPtys(session: AgentSession, options?: CallOptions): Promise<PtyInfo[]> {
  return (await session.json<PtyListResponse>('listPtys', 'GET', ROUTES.pty, undefined, options, DEFAULT_TIMEOUTS_MS.control)).terminals;
}

export function getPty(session: AgentSession, id: string, options?: CallOptions): Promise<PtyInfo> {
  return session.json<PtyInfo>('getPty', 'GET', ROUTES.ptyInfo + query(id), undefined, options, DEFAULT_TIMEOUTS_MS.control);
}

export function resizePty(session: AgentSession, id: string, cols: number, rows: number, options?: CallOptions): Promise<PtyInfo> {
  return session.json<PtyInfo>('resizePty', 'POST', ROUTES.ptyResize, { id, cols, rows }, options, DEFAULT_TIMEOUTS_MS.control);
}

export function killPty(session: AgentSession, id: string, options?: CallOptions): Promise<PtyInfo> {
  return session.json<PtyInfo>('killPty', 'POST', ROUTES.ptyKill, { id }, options, KILL_TIMEOUT_MS);
}

/**
 * Attaches to a terminal. Resolves once the agent accepted (rejects like the JSON calls, e.g. for an unknown
 * id); the deadline covers only that, the attachment then lives until either side closes it.
 */
export async function attachPty(session: AgentSession, id: string, handlers: PtyHandlers, options?: CallOptions): Promise<PtyStream> {
  const operation = 'attachPty';
  const deadline = session.deadline(operation, options, DEFAULT_TIMEOUTS_MS.control);
  try {
    const stream = session.stream(
      operation,
      { ':method': 'POST', ':path': ROUTES.ptyAttach + query(id), 'content-type': 'application/vnd.sandboxd.frames' },
      deadline,
    );
    const closed = new Promise<void>((resolve) => stream.once('close', () => resolve()));
    const { status } = await session.response(operation, stream, deadline);
    if (status !== 200) throw errorFromAgentAnswer(status, await session.body(operation, stream, deadline), { operation });
    const decoder = new FrameDecoder();
    const detach = (): void => {
      if (!stream.closed) stream.close(constants.NGHTTP2_CANCEL);
    };
    stream.on('data', (chunk: Buffer) => {
      try {
        for (const frame of decoder.push(chunk)) {
          if (frame.type === FrameType.Stdout) handlers.onOutput(frame.payload);
          else if (frame.type === FrameType.Exit) handlers.onExit(decodeJsonPayload<PtyExit>(frame));
        }
      } catch {
        detach(); // not the protocol: drop this attachment
      }
    });
    stream.once('end', () => stream.end());
    const send = (frame: Buffer): void => {
      if (!stream.closed && !stream.writableEnded) stream.write(frame);
    };
    return {
      write: (data) => send(encodeFrame(FrameType.Stdin, data)),
      resize: (cols, rows) => send(encodeJsonFrame(FrameType.Resize, { cols, rows })),
      detach,
      closed,
    };
  } finally {
    deadline.clear();
  }
}
