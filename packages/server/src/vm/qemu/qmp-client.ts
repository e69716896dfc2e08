/**
 * A client of the QEMU Machine Protocol over QEMU's `-qmp unix:…,server=on` socket: greeting, capability
 * negotiation, commands matched to answers by id, asynchronous events and per-command timeouts.
 * QMP serves one client at a time, so a VM has exactly one QmpClient for its whole life.
 */
import { EventEmitter } from 'node:events';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** An asynchronous QMP event, e.g. `SHUTDOWN`, `STOP`, `RESUME`, `MIGRATION`, `BALLOON_CHANGE`. */
export interface QmpEvent {
  event: string;
  data: Record<string, unknown>;
  timestamp: { seconds: number; microseconds: number };
}

/** QEMU answered a command with an error. */
export class QmpCommandError extends Error {
  override name = 'QmpCommandError';
  constructor(
    readonly command: string,
    /** QMP error class, e.g. `GenericError`, `CommandNotFound`. */
    readonly errorClass: string,
    readonly description: string,
  ) {
    super(`QMP ${command} failed: ${errorClass}: ${description}`);
  }
}

export interface QmpClientEvents {
  event: [QmpEvent];
  /** The connection ended; QEMU closes it when it exits. */
  close: [];
}

interface Pending {
  command: string;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** Default limit of one command; migration and balloon waits poll with short commands. */
const DEFAULT_COMMAND_TIMEOUT_MS = 10_000;

/** A negotiated QMP session. */
export class QmpClient extends EventEmitter<QmpClientEvents> {
  private nextId = 1;
  private buffer = '';
  private readonly pending = new Map<string, Pending>();
  private closedError: Error | undefined;

  private constructor(
    private readonly socket: Socket,
    /** QEMU's version from the greeting, e.g. `{major: 7, minor: 2, micro: 22}`. */
    readonly version: { major: number; minor: number; micro: number },
  ) {
    super();
    socket.on('data', (chunk: string) => this.onData(chunk));
    socket.on('error', (error) => this.fail(error));
    socket.on('close', () => {
      this.fail(new Error('QMP connection closed'));
      this.emit('close');
    });
  }

  /**
   * Connects to `socketPath`, retrying while QEMU has not created or opened the socket yet, then reads the
   * greeting and enters command mode. Rejects after `timeoutMs` or when `signal` aborts.
   */
  static async connect(socketPath: string, options: { timeoutMs: number; signal?: AbortSignal }): Promise<QmpClient> {
    const deadline = Date.now() + options.timeoutMs;
    for (;;) {
      options.signal?.throwIfAborted();
      try {
        return await QmpClient.tryConnect(socketPath, Math.max(1, deadline - Date.now()));
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        const retryable = code === 'ENOENT' || code === 'ECONNREFUSED';
        if (!retryable || Date.now() >= deadline) throw error;
      }
      await sleep(10, undefined, { signal: options.signal });
    }
  }

  private static tryConnect(socketPath: string, timeoutMs: number): Promise<QmpClient> {
    return new Promise((resolve, reject) => {
      const socket = connect(socketPath);
      socket.setEncoding('utf8');
      let buffered = '';
      const timer = setTimeout(() => finish(new Error(`no QMP greeting on ${socketPath} within ${timeoutMs} ms`)), timeoutMs);
      const finish = (error: Error | undefined, client?: QmpClient) => {
        clearTimeout(timer);
        socket.off('data', onGreeting);
        socket.off('error', onError);
        if (error) {
          socket.destroy();
          reject(error);
        } else resolve(client!);
      };
      const onError = (error: Error) => finish(error);
      const onGreeting = (chunk: string) => {
        buffered += chunk;
        const newline = buffered.indexOf('\n');
        if (newline < 0) return;
        let greeting: { QMP?: { version?: { qemu?: { major: number; minor: number; micro: number } } } };
        try {
          greeting = JSON.parse(buffered.slice(0, newline));
        } catch {
          finish(new Error(`not a QMP greeting: ${buffered.slice(0, 200)}`));
          return;
        }
        const version = greeting.QMP?.version?.qemu;
        if (!version) {
          finish(new Error(`not a QMP greeting: ${buffered.slice(0, 200)}`));
          return;
        }
        socket.off('data', onGreeting);
        const client = new QmpClient(socket, version);
        const rest = buffered.slice(newline + 1);
        if (rest) client.onData(rest);
        client
          .execute('qmp_capabilities', undefined, { timeoutMs })
          .then(() => finish(undefined, client))
          .catch((error: Error) => finish(error));
      };
      socket.on('data', onGreeting);
      socket.once('error', onError);
    });
  }

  /** True until the connection ended. */
  get connected(): boolean {
    return this.closedError === undefined;
  }

  /** Runs a command and resolves with its `return` value; rejects with QmpCommandError or on timeout. */
  execute<T = unknown>(command: string, args?: Record<string, unknown>, options: { timeoutMs?: number } = {}): Promise<T> {
    if (this.closedError) return Promise.reject(new Error(`QMP ${command}: the connection is closed (${this.closedError.message})`));
    const id = String(this.nextId++);
    const timeoutMs = options.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`QMP ${command}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { command, resolve: resolve as (value: unknown) => void, reject, timer });
      this.socket.write(`${JSON.stringify({ execute: command, ...(args ? { arguments: args } : {}), id })}\n`);
    });
  }

  /** Resolves with the next event named `name` that satisfies `match`; rejects on timeout or close. */
  waitForEvent(name: string, options: { timeoutMs: number; match?: (event: QmpEvent) => boolean }): Promise<QmpEvent> {
    return new Promise((resolve, reject) => {
      const cleanup = () => {
        clearTimeout(timer);
        this.off('event', onEvent);
        this.off('close', onClose);
      };
      const onEvent = (event: QmpEvent) => {
        if (event.event !== name || (options.match && !options.match(event))) return;
        cleanup();
        resolve(event);
      };
      const onClose = () => {
        cleanup();
        reject(new Error(`QMP closed while waiting for ${name}`));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`no QMP ${name} event within ${options.timeoutMs} ms`));
      }, options.timeoutMs);
      this.on('event', onEvent);
      this.once('close', onClose);
    });
  }

  /** Closes the connection (QEMU keeps running and accepts the next client). */
  close(): void {
    this.socket.destroy();
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    let newline;
    while ((newline = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, newline).trim();
      this.buffer = this.buffer.slice(newline + 1);
      if (line) this.onMessage(line);
    }
  }

  private onMessage(line: string): void {
    let message: {
      id?: string;
      return?: unknown;
      error?: { class: string; desc: string };
      event?: string;
      data?: Record<string, unknown>;
      timestamp?: QmpEvent['timestamp'];
    };
    try {
      message = JSON.parse(line);
    } catch {
      return; // QEMU only sends JSON; a torn line would be a QEMU bug, nothing to answer
    }
    if (message.event) {
      this.emit('event', { event: message.event, data: message.data ?? {}, timestamp: message.timestamp ?? { seconds: 0, microseconds: 0 } });
      return;
    }
    if (message.id === undefined) return;
    const pending = this.pending.get(message.id);
    if (!pending) return; // answered after its timeout
    this.pending.delete(message.id);
    clearTimeout(pending.timer);
    if (message.error) pending.reject(new QmpCommandError(pending.command, message.error.class, message.error.desc));
    else pending.resolve(message.return);
  }

  private fail(error: Error): void {
    this.closedError ??= error;
    for (const [id, pending] of this.pending) {
      clearTimeout(pending.timer);
      pending.reject(new Error(`QMP ${pending.command}: ${error.message}`));
      this.pending.delete(id);
    }
  }
}
