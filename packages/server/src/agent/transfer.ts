/**
 * Large files through the VM's transfer share (the agent's `files/transfer.ts`): the bytes cross as chunk files
 * in the host's per-VM transfer area, a capped tmpfs exported to the guest over virtio-9p, and only control
 * messages use the agent link. Files up to {@link INLINE_MAX_BYTES} still travel over the link, where one
 * request is quicker than a chunk round trip.
 *
 * The guest can write into the area, so nothing there is trusted: chunk names are random, the host creates its
 * chunks with O_EXCL|O_NOFOLLOW (never writing through a planted symlink) and opens the guest's with
 * O_NOFOLLOW|O_NONBLOCK and checks that each is a regular file of the announced size. Chunks in flight are
 * bounded by {@link TRANSFER_SLOTS} per VM, which the area's size cap must hold.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import {
  HEADER_FILE_MODE,
  HEADER_FILE_SIZE,
  HEADER_TRANSFER_BYTES,
  ROUTES,
  type FileWriteResponse,
  type TransferInRequest,
  type TransferInResponse,
  type TransferOutRequest,
  type TransferOutResponse,
} from '@sandboxd/agent/protocol';
import type { AgentSession } from './agent-session.ts';
import type { Deadline } from './deadline.ts';
import { AgentError, AgentProtocolError } from './errors.ts';

/** Files up to this size go over the agent link. */
export const INLINE_MAX_BYTES = 1024 * 1024;
/** One chunk file. */
export const CHUNK_BYTES = 8 * 1024 * 1024;
/** Chunks one VM may have in its area at once (the area holds 34 MiB: four chunks and file-system slack). */
export const TRANSFER_SLOTS = 4;
/** Chunks one transfer keeps in flight: one being copied in the guest while the next is written. */
const WINDOW = 2;

/** A VM's transfer area as the host uses it. */
export class TransferLane {
  private free = TRANSFER_SLOTS;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly dir: string) {}

  /** Waits for room for one chunk; call the returned function when the chunk is gone. */
  async reserve(signal: AbortSignal): Promise<() => void> {
    if (this.free > 0) this.free -= 1;
    else {
      await new Promise<void>((resolve, reject) => {
        const onAbort = (): void => {
          this.waiting.splice(this.waiting.indexOf(grant), 1);
          reject(signal.reason as Error);
        };
        const grant = (): void => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
        if (signal.aborted) {
          reject(signal.reason as Error);
          return;
        }
        this.waiting.push(grant);
        signal.addEventListener('abort', onAbort, { once: true });
      });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.free += 1;
    };
  }

  /** A fresh chunk name (also used for upload ids). */
  newName(): string {
    return randomBytes(16).toString('hex');
  }

  /** Writes a new chunk file the guest may read. */
  async writeChunk(name: string, buffers: Buffer[]): Promise<void> {
    const handle = await open(join(this.dir, name), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
    try {
      await handle.writev(buffers);
    } finally {
      await handle.close();
    }
  }

  /** Reads (and removes) a chunk the guest wrote, which must be a regular file of exactly `bytes` bytes. */
  async takeChunk(name: string, bytes: number): Promise<Buffer> {
    const path = join(this.dir, name);
    try {
      const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      try {
        const stats = await handle.stat();
        if (!stats.isFile() || stats.size !== bytes) throw new AgentProtocolError(`transfer chunk ${name} is not a ${bytes}-byte file`);
        const data = Buffer.allocUnsafe(bytes);
        let read = 0;
        while (read < bytes) {
          const { bytesRead } = await handle.read(data, read, bytes - read, read);
          if (bytesRead === 0) throw new AgentProtocolError(`transfer chunk ${name} ended early`);
          read += bytesRead;
        }
        return data;
      } finally {
        await handle.close();
      }
    } finally {
      await this.discard(name);
    }
  }

  /** True when a chunk file is in the area. */
  async holds(name: string): Promise<boolean> {
    return lstat(join(this.dir, name)).then(
      () => true,
      () => false,
    );
  }

  /** Removes a chunk file if it is there. */
  async discard(name: string): Promise<void> {
    await unlink(join(this.dir, name)).catch(() => undefined);
  }
}

/** Rejects with the deadline's own error when it is what ended a call. */
function deadlineAware<T>(deadline: Deadline, call: Promise<T>): Promise<T> {
  return call.catch((error: unknown) => {
    throw deadline.signal.aborted ? (deadline.signal.reason as Error) : error;
  });
}

/** Options of {@link uploadThroughLane}. */
export interface LaneUploadOptions {
  mode?: number;
  parents?: boolean;
}

/**
 * Writes `path` from `head` (already read from the source, more than {@link INLINE_MAX_BYTES}) and the rest of
 * `source`, in chunks through the lane. On failure the upload's temporary file is removed.
 */
export async function uploadThroughLane(
  session: AgentSession,
  lane: TransferLane,
  path: string,
  head: Buffer[],
  source: AsyncIterator<Uint8Array>,
  options: LaneUploadOptions,
  deadline: Deadline,
): Promise<FileWriteResponse> {
  const id = lane.newName();
  const inFlight = new Set<Promise<TransferInResponse>>();
  const call = { timeoutMs: Number.POSITIVE_INFINITY, signal: deadline.signal };
  const sendChunk = async (buffers: Buffer[], offset: number, last: boolean): Promise<TransferInResponse> => {
    const release = await lane.reserve(deadline.signal);
    const chunk = lane.newName();
    try {
      await lane.writeChunk(chunk, buffers);
      const request: TransferInRequest = { path, id, offset, chunk, last, ...options };
      return await deadlineAware(deadline, session.json<TransferInResponse>('writeFile', 'POST', ROUTES.fileTransferIn, request, call, 0));
    } catch (error) {
      // The guest could not find the chunk: whether the host still has it tells a guest-side fault from a host one.
      if (error instanceof AgentError && error.code === 'TRANSFER_CHUNK_MISSING') {
        error.message += `; the host's area ${(await lane.holds(chunk)) ? 'still holds it' : 'does not hold it either'}`;
      }
      throw error;
    } finally {
      await lane.discard(chunk);
      release();
    }
  };
  // Starts a chunk, then waits while the window is full: for the oldest chunk, so one is always in flight.
  const launch = async (buffers: Buffer[], offset: number): Promise<void> => {
    const sent = sendChunk(buffers, offset, false);
    inFlight.add(sent);
    sent.then(
      () => inFlight.delete(sent),
      () => undefined,
    );
    while (inFlight.size >= WINDOW) await Promise.race(inFlight);
  };
  let offset = 0;
  let current: Buffer[] = [];
  let currentBytes = 0;
  // A full chunk is sent once more bytes are known to follow: the last chunk is always sent with `last`.
  let full: Buffer[] | undefined;
  const take = async (data: Buffer): Promise<void> => {
    let rest = data;
    while (rest.length > 0) {
      if (full) {
        await launch(full, offset);
        offset += CHUNK_BYTES;
        full = undefined;
      }
      const piece = rest.subarray(0, CHUNK_BYTES - currentBytes);
      current.push(piece);
      currentBytes += piece.length;
      rest = rest.subarray(piece.length);
      if (currentBytes === CHUNK_BYTES) {
        full = current;
        current = [];
        currentBytes = 0;
      }
    }
  };
  try {
    for (const buffer of head) await take(buffer);
    for (;;) {
      const next = await deadline.race(source.next());
      if (next.done) break;
      await take(Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength));
    }
    // Every earlier chunk must be in place before the last one renames the file.
    await Promise.all(inFlight);
    const lastChunk = currentBytes > 0 ? current : full!;
    const answer = await sendChunk(lastChunk, offset, true);
    return { path: answer.path, size: answer.size ?? offset + answer.bytes };
  } catch (error) {
    await Promise.allSettled(inFlight);
    await session.json('writeFile', 'POST', ROUTES.fileTransferAbort, { path, id }, { timeoutMs: 15_000 }, 0).catch(() => undefined);
    throw error;
  }
}

/** Query parameters that let a read answer through the lane (`GET /v1/files/content`). */
export function laneReadParams(chunk: string): Record<string, string> {
  return { transfer: chunk, transferLength: String(CHUNK_BYTES), transferAbove: String(INLINE_MAX_BYTES) };
}

/** True when a read's answer came through the lane. */
export function answeredThroughLane(headers: Record<string, unknown>): boolean {
  return headers[HEADER_TRANSFER_BYTES] !== undefined;
}

/**
 * The download whose first chunk (`first`, of `firstBytes`) the agent already wrote: yields the file's bytes,
 * fetching the next chunk while the current one is consumed. `release` frees the first chunk's slot.
 */
export function downloadThroughLane(
  session: AgentSession,
  lane: TransferLane,
  path: string,
  headers: Record<string, unknown>,
  first: { chunk: string; release: () => void },
  deadline: Deadline,
): { stream: Readable; size: number; mode: number } {
  const size = Number(headers[HEADER_FILE_SIZE]);
  const firstBytes = Number(headers[HEADER_TRANSFER_BYTES]);
  const mode = Number.parseInt(String(headers[HEADER_FILE_MODE] ?? '644'), 8);
  const call = { timeoutMs: Number.POSITIVE_INFINITY, signal: deadline.signal };
  type Fetched = { chunk: string; bytes: number; release: () => void };
  const fetchChunk = async (offset: number): Promise<Fetched> => {
    const release = await lane.reserve(deadline.signal);
    const chunk = lane.newName();
    const length = Math.min(CHUNK_BYTES, size - offset);
    try {
      const request: TransferOutRequest = { path, chunk, offset, length };
      const answer = await deadlineAware(deadline, session.json<TransferOutResponse>('readFile', 'POST', ROUTES.fileTransferOut, request, call, 0));
      if (answer.bytes !== length)
        throw new AgentProtocolError(`readFile: ${path} changed while it was read (got ${answer.bytes} of ${length} bytes at ${offset})`);
      return { chunk, bytes: answer.bytes, release };
    } catch (error) {
      await lane.discard(chunk);
      release();
      throw error;
    }
  };
  // Until the reader pulls the first bytes the generator has not run, so its clean-up cannot either.
  let started = false;
  async function* bytes(): AsyncGenerator<Buffer> {
    started = true;
    let current: Fetched | undefined = { chunk: first.chunk, bytes: firstBytes, release: first.release };
    let next: Promise<Fetched> | undefined;
    let offset = firstBytes;
    try {
      while (current) {
        next = offset < size ? fetchChunk(offset) : undefined;
        next?.catch(() => undefined);
        const data = await lane.takeChunk(current.chunk, current.bytes);
        current.release();
        current = undefined;
        for (let at = 0; at < data.length; at += 1024 * 1024) yield data.subarray(at, at + 1024 * 1024);
        if (next) {
          current = await next;
          offset += current.bytes;
          next = undefined;
        }
      }
    } finally {
      deadline.clear();
      if (current) {
        await lane.discard(current.chunk);
        current.release();
      }
      const pending = await next?.catch(() => undefined);
      if (pending) {
        await lane.discard(pending.chunk);
        pending.release();
      }
    }
  }
  if (!Number.isSafeInteger(size) || !Number.isSafeInteger(firstBytes) || firstBytes > size)
    throw new AgentProtocolError(`readFile: the agent announced ${firstBytes} of ${size} bytes`);
  const stream = Readable.from(bytes(), { objectMode: false, highWaterMark: 1024 * 1024 });
  stream.once('close', () => {
    if (started) return;
    started = true;
    deadline.clear();
    void lane.discard(first.chunk).finally(first.release);
  });
  deadline.signal.addEventListener('abort', () => stream.destroy(deadline.signal.reason as Error), { once: true });
  return { stream, size, mode };
}
