/**
 * Terminals (PTY sessions) in a VM, reached through its session (`{ sessionId }`) or directly (`{ vmId }`).
 * `attach` connects a WebSocket with the terminal's single-use connect token, so it works where headers
 * cannot be set (browsers): pass `WebSocket` on Node.js before 22 (e.g. the `ws` package's).
 */
import type { PtySession, PtySessionState } from '../api-types.ts';
import { NetworkError } from '../errors.ts';
import type { CallOptions } from '../call-options.ts';
import type { Transport } from '../transport.ts';

/** Whose terminals: a session's (its current VM; creating starts one if needed) or a VM's. */
export type TerminalOwner = { sessionId: string; vmId?: never } | { vmId: string; sessionId?: never };

export interface TerminalCreateOptions extends CallOptions {
  /** Default 80. */
  cols?: number;
  /** Default 24. */
  rows?: number;
  /** A command line to run instead of an interactive shell; the terminal exits with it. */
  command?: string;
  /** Absolute path of the shell (default /bin/bash). */
  shell?: string;
  env?: Record<string, string>;
  cwd?: string;
  /** Recent output replayed to each new attachment, 1 KiB to 1 MiB (default 64 KiB). */
  scrollbackBytes?: number;
}

/** How a terminal's program ended. */
export interface TerminalExit {
  exitCode: number | null;
  signal: string | null;
}

/** The part of the WHATWG WebSocket API used here (browsers, Node.js 22+, and the `ws` package). */
export interface WebSocketLike {
  binaryType: string;
  readonly readyState: number;
  send(data: string | ArrayBuffer | Uint8Array): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'open' | 'close' | 'error' | 'message', listener: (event: { data?: unknown; code?: number; reason?: string }) => void): void;
}

export type WebSocketConstructor = new (url: string) => WebSocketLike;

export interface TerminalAttachOptions {
  /** Terminal output: first the scrollback, then live. */
  onData?: (data: Uint8Array) => void;
  /** Default: `globalThis.WebSocket`. */
  WebSocket?: WebSocketConstructor;
  /** Aborting it before the WebSocket is open closes it and rejects with the signal's reason (an open connection: `close()`). */
  signal?: AbortSignal | undefined;
}

const OPEN = 1;

/** A live attachment. Closing it detaches; the terminal keeps running until deleted or its program ends. */
export class TerminalConnection {
  /** Resolves with how the program ended, or null when the connection closed first. */
  readonly exit: Promise<TerminalExit | null>;
  /** Resolves when the WebSocket closed, with its close code. */
  readonly closed: Promise<number>;
  private readonly encoder = new TextEncoder();

  /** @internal Use `client.terminals.attach`. */
  constructor(
    private readonly socket: WebSocketLike,
    onData: (data: Uint8Array) => void,
  ) {
    let exited: (exit: TerminalExit | null) => void = () => undefined;
    this.exit = new Promise((resolve) => (exited = resolve));
    this.closed = new Promise((resolve) =>
      socket.addEventListener('close', (event) => {
        exited(null);
        resolve(event.code ?? 1005);
      }),
    );
    socket.addEventListener('message', ({ data }) => {
      if (typeof data === 'string') {
        const message = parseControl(data);
        if (message?.type === 'exit') exited({ exitCode: message.exit_code ?? null, signal: message.signal ?? null });
      } else if (data instanceof ArrayBuffer) {
        onData(new Uint8Array(data));
      } else if (ArrayBuffer.isView(data)) {
        onData(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
      }
    });
  }

  /** Input, as if typed (strings are sent as UTF-8). */
  write(data: string | Uint8Array): void {
    if (this.socket.readyState === OPEN) this.socket.send(typeof data === 'string' ? this.encoder.encode(data) : data);
  }

  /** Resizes the terminal; the program gets SIGWINCH. */
  resize(cols: number, rows: number): void {
    if (this.socket.readyState === OPEN) this.socket.send(JSON.stringify({ type: 'resize', cols, rows }));
  }

  /** Detaches. */
  close(): void {
    this.socket.close(1000);
  }
}

function parseControl(text: string): { type?: string; exit_code?: number | null; signal?: string | null } | null {
  try {
    return JSON.parse(text) as { type?: string };
  } catch {
    return null;
  }
}

export class Terminals {
  constructor(private readonly transport: Transport) {}

  /** Starts a terminal (an interactive login shell unless `command` is given). */
  create(owner: TerminalOwner, options: TerminalCreateOptions = {}): Promise<PtySession> {
    const json = {
      cols: options.cols ?? 80,
      rows: options.rows ?? 24,
      ...(options.command !== undefined ? { command: options.command } : {}),
      ...(options.shell !== undefined ? { shell: options.shell } : {}),
      ...(options.env ? { env: options.env } : {}),
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      ...(options.scrollbackBytes !== undefined ? { scrollback_bytes: options.scrollbackBytes } : {}),
    };
    const { signal } = options;
    return owner.sessionId !== undefined
      ? this.transport.call('/v1/sessions/{session_id}/pty/sessions', 'post', { params: { session_id: owner.sessionId }, json, signal })
      : this.transport.call('/v1/vms/{vm_id}/pty/sessions', 'post', { params: { vm_id: owner.vmId }, json, signal });
  }

  async list(owner: TerminalOwner, options: CallOptions = {}): Promise<PtySessionState[]> {
    const { signal } = options;
    const answer =
      owner.sessionId !== undefined
        ? await this.transport.call('/v1/sessions/{session_id}/pty/sessions', 'get', { params: { session_id: owner.sessionId }, signal })
        : await this.transport.call('/v1/vms/{vm_id}/pty/sessions', 'get', { params: { vm_id: owner.vmId }, signal });
    return answer.sessions;
  }

  /** A terminal's record, with a fresh connect token. */
  get(owner: TerminalOwner, ptyId: string, options: CallOptions = {}): Promise<PtySession> {
    const { signal } = options;
    return owner.sessionId !== undefined
      ? this.transport.call('/v1/sessions/{session_id}/pty/sessions/{pty_id}', 'get', { params: { session_id: owner.sessionId, pty_id: ptyId }, signal })
      : this.transport.call('/v1/vms/{vm_id}/pty/sessions/{pty_id}', 'get', { params: { vm_id: owner.vmId, pty_id: ptyId }, signal });
  }

  resize(owner: TerminalOwner, ptyId: string, cols: number, rows: number, options: CallOptions = {}): Promise<PtySessionState> {
    const json = { cols, rows };
    const { signal } = options;
    return owner.sessionId !== undefined
      ? this.transport.call('/v1/sessions/{session_id}/pty/sessions/{pty_id}/resize', 'post', {
          params: { session_id: owner.sessionId, pty_id: ptyId },
          json,
          signal,
        })
      : this.transport.call('/v1/vms/{vm_id}/pty/sessions/{pty_id}/resize', 'post', { params: { vm_id: owner.vmId, pty_id: ptyId }, json, signal });
  }

  /** Hangs the terminal up (SIGHUP, then SIGKILL) and forgets it; answers its final state. */
  delete(owner: TerminalOwner, ptyId: string, options: CallOptions = {}): Promise<PtySessionState> {
    const { signal } = options;
    return owner.sessionId !== undefined
      ? this.transport.call('/v1/sessions/{session_id}/pty/sessions/{pty_id}', 'delete', { params: { session_id: owner.sessionId, pty_id: ptyId }, signal })
      : this.transport.call('/v1/vms/{vm_id}/pty/sessions/{pty_id}', 'delete', { params: { vm_id: owner.vmId, pty_id: ptyId }, signal });
  }

  /** Attaches over a WebSocket: output to `onData` (scrollback first), input and resizes through the connection. */
  async attach(owner: TerminalOwner, ptyId: string, options: TerminalAttachOptions = {}): Promise<TerminalConnection> {
    const Socket = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (!Socket) throw new TypeError('no WebSocket: use Node.js 22+ or a browser, or pass options.WebSocket (e.g. the ws package)');
    const { signal } = options;
    const record = await this.get(owner, ptyId, { signal });
    signal?.throwIfAborted();
    const url = `${record.websocket_url}?token=${encodeURIComponent(record.connect_token)}`;
    const socket = new Socket(url);
    socket.binaryType = 'arraybuffer';
    const connection = new TerminalConnection(socket, options.onData ?? (() => undefined));
    let onAbort: (() => void) | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        onAbort = () => {
          reject(signal?.reason);
          socket.close(1000);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        socket.addEventListener('open', () => resolve());
        // A failed or aborted handshake is reported by the close that follows (the `ws` package throws an error event nobody listens to).
        socket.addEventListener('error', () => undefined);
        socket.addEventListener('close', (event) =>
          reject(
            new NetworkError(
              `could not attach to terminal ${ptyId}: the WebSocket closed (${event.code ?? 'no code'}${event.reason ? `: ${event.reason}` : ''})`,
              { operation: 'terminals.attach' },
            ),
          ),
        );
      });
    } finally {
      // Once open, the connection is the caller's: `close()` ends it.
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
    return connection;
  }
}
