/**
 * File operations on guest paths: streamed write and read (nothing buffered whole), stat, list, mkdir, remove,
 * and tar extraction. Paths must be absolute; the agent rejects anything else with `INVALID_PATH`.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  HEADER_FILE_MODE,
  ROUTES,
  type ExtractResponse,
  type FileListResponse,
  type FileStat,
  type FileWriteResponse,
  type MkdirResponse,
  type RemoveResponse,
} from '@sandboxd/agent/protocol';
import { ANSWER_MAX_BYTES, DEFAULT_TIMEOUTS_MS, type AgentSession } from './agent-session.ts';
import type { CallOptions } from './deadline.ts';
import { AgentError, AgentProtocolError, errorFromAgentAnswer } from './errors.ts';
import { answeredThroughLane, downloadThroughLane, INLINE_MAX_BYTES, laneReadParams, uploadThroughLane, type TransferLane } from './transfer.ts';

/** Bytes to send: a buffer, a string (UTF-8), or a stream / async iterable of chunks. */
export type FileSource = Buffer | Uint8Array | string | Readable | AsyncIterable<Uint8Array>;

/** Options of {@link writeFile}. */
export interface WriteFileOptions extends CallOptions {
  /** Permission bits, default 0o644. */
  mode?: number;
  /** Create missing parent directories (default true). */
  parents?: boolean;
}

/** An open download: `stream` yields exactly `size` bytes or errors. */
export interface FileDownload {
  stream: Readable;
  size: number;
  mode: number;
}

/** Options of {@link extractTar}. */
export interface ExtractTarOptions extends CallOptions {
  /** The archive is gzip-compressed. */
  gzip?: boolean;
}

function query(path: string, params: Record<string, string> = {}): string {
  return `?${new URLSearchParams({ path, ...params }).toString()}`;
}

function toReadable(source: FileSource): Readable {
  if (source instanceof Readable) return source;
  if (typeof source === 'string' || source instanceof Uint8Array) return Readable.from([Buffer.from(source)]);
  return Readable.from(source);
}

/** Sends `source` as the body of a request and returns the JSON answer. */
async function upload<T>(
  session: AgentSession,
  operation: string,
  path: string,
  source: FileSource,
  options: CallOptions | undefined,
  method: 'PUT' | 'POST',
): Promise<T> {
  const deadline = session.deadline(operation, options, DEFAULT_TIMEOUTS_MS.transfer);
  try {
    const stream = session.stream(operation, { ':method': method, ':path': path, 'content-type': 'application/octet-stream' }, deadline);
    const answered = session.response(operation, stream, deadline);
    answered.catch(() => undefined);
    // The agent may answer (an error) before it read everything; then the rest of the upload is moot.
    const sent = pipeline(toReadable(source), stream).catch(async (error: unknown) => {
      if (
        (await answered.then(
          () => true,
          () => false,
        )) === false
      )
        throw error;
    });
    const [{ status }] = await Promise.all([answered, deadline.race(sent)]);
    const payload = await session.body(operation, stream, deadline);
    if (status < 200 || status > 299) throw errorFromAgentAnswer(status, payload, { operation });
    return JSON.parse(payload.toString('utf8')) as T;
  } catch (error) {
    throw error instanceof AgentError ? error : session.streamFailure(operation, error as Error);
  } finally {
    deadline.clear();
  }
}

/**
 * Writes a file (atomically replaced at the end). With a transfer lane, a source longer than
 * `INLINE_MAX_BYTES` goes through it; anything shorter, or everything without a lane, over the link.
 */
export async function writeFile(
  session: AgentSession,
  path: string,
  source: FileSource,
  options: WriteFileOptions = {},
  lane?: TransferLane,
): Promise<FileWriteResponse> {
  const params: Record<string, string> = {};
  if (options.mode !== undefined) params.mode = options.mode.toString(8);
  if (options.parents === false) params.parents = '0';
  const inline = (body: FileSource) => upload<FileWriteResponse>(session, 'writeFile', `${ROUTES.fileContent}${query(path, params)}`, body, options, 'PUT');
  const size = typeof source === 'string' ? Buffer.byteLength(source) : source instanceof Uint8Array ? source.byteLength : undefined;
  if (!lane || (size !== undefined && size <= INLINE_MAX_BYTES)) return inline(source);
  // Read just enough of the source to know which way it goes.
  const iterator = toReadable(source)[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
  const head: Buffer[] = [];
  let headBytes = 0;
  while (headBytes <= INLINE_MAX_BYTES) {
    const next = await iterator.next();
    if (next.done) return inline(Readable.from(head));
    const chunk = Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength);
    head.push(chunk);
    headBytes += chunk.length;
  }
  const deadline = session.deadline('writeFile', options, DEFAULT_TIMEOUTS_MS.transfer);
  try {
    return await uploadThroughLane(session, lane, path, head, iterator, { mode: options.mode, parents: options.parents }, deadline);
  } finally {
    deadline.clear();
    await iterator.return?.();
  }
}

/**
 * Opens a file for reading. Resolves once the agent opened it (missing files reject with `GuestPathError`);
 * the deadline keeps running until the stream is consumed.
 */
export async function readFile(session: AgentSession, path: string, options?: CallOptions, lane?: TransferLane): Promise<FileDownload> {
  const operation = 'readFile';
  const deadline = session.deadline(operation, options, DEFAULT_TIMEOUTS_MS.transfer);
  let handedOver = false;
  let first: { chunk: string; release: () => void } | undefined;
  try {
    // With a lane, a large file answers through it: its first chunk needs a slot before asking.
    if (lane) first = { chunk: lane.newName(), release: await lane.reserve(deadline.signal) };
    const stream = session.stream(
      operation,
      { ':method': 'GET', ':path': `${ROUTES.fileContent}${query(path, first ? laneReadParams(first.chunk) : {})}` },
      deadline,
    );
    stream.end();
    const { status, headers } = await session.response(operation, stream, deadline);
    if (status !== 200) throw errorFromAgentAnswer(status, await session.body(operation, stream, deadline), { operation });
    if (lane && first && answeredThroughLane(headers)) {
      const download = downloadThroughLane(session, lane, path, headers, first, deadline);
      handedOver = true;
      return download;
    }
    first?.release();
    const size = Number(headers['content-length']);
    const mode = Number.parseInt(String(headers[HEADER_FILE_MODE] ?? '644'), 8);
    // Errors (a reset, a short body, the deadline) must reach the reader as stream errors.
    const body = new Readable({ read: () => stream.resume(), highWaterMark: 1024 * 1024 });
    let received = 0;
    stream.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (!body.push(chunk)) stream.pause();
    });
    stream.once('end', () => {
      deadline.clear();
      if (received !== size) {
        body.destroy(session.open ? new AgentProtocolError(`readFile: got ${received} of ${size} bytes of ${path}`) : session.streamFailure(operation));
      } else body.push(null);
    });
    stream.once('close', () => {
      deadline.clear();
      if (!body.readableEnded && !stream.readableEnded)
        body.destroy(deadline.signal.aborted ? (deadline.signal.reason as Error) : session.streamFailure(operation));
    });
    body.once('close', () => {
      // The reader gave up: stop the transfer in the guest too.
      if (!stream.closed) stream.close(0x8 /* NGHTTP2_CANCEL */);
    });
    handedOver = true;
    return { stream: body, size, mode };
  } finally {
    if (!handedOver) {
      deadline.clear();
      if (first) {
        await lane?.discard(first.chunk);
        first.release();
      }
    }
  }
}

/** Reads a whole file into memory (small files). */
export async function readFileBytes(session: AgentSession, path: string, options?: CallOptions, lane?: TransferLane): Promise<Buffer> {
  const { stream } = await readFile(session, path, options, lane);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Metadata of a path (symlinks not followed). */
export function statPath(session: AgentSession, path: string, options?: CallOptions): Promise<FileStat> {
  return session.json<FileStat>('stat', 'GET', `${ROUTES.fileStat}${query(path)}`, undefined, options, DEFAULT_TIMEOUTS_MS.control);
}

/** Entries of a directory, sorted by name. */
export async function listDir(session: AgentSession, path: string, options?: CallOptions): Promise<FileStat[]> {
  const answer = await session.json<FileListResponse>(
    'listDir',
    'GET',
    `${ROUTES.fileList}${query(path)}`,
    undefined,
    options,
    DEFAULT_TIMEOUTS_MS.control,
    ANSWER_MAX_BYTES.listDir,
  );
  return answer.entries;
}

/** Creates a directory (with parents unless `parents: false`). */
export function mkdir(session: AgentSession, path: string, options: CallOptions & { parents?: boolean; mode?: number } = {}): Promise<MkdirResponse> {
  const { timeoutMs, signal, ...rest } = options;
  return session.json<MkdirResponse>('mkdir', 'POST', ROUTES.fileMkdir, { path, ...rest }, { timeoutMs, signal }, DEFAULT_TIMEOUTS_MS.control);
}

/** Removes a path; directories with contents only with `recursive`. Resolves `{removed: false}` if nothing was there. */
export function remove(session: AgentSession, path: string, options: CallOptions & { recursive?: boolean } = {}): Promise<RemoveResponse> {
  const { timeoutMs, signal, ...rest } = options;
  return session.json<RemoveResponse>('remove', 'POST', ROUTES.fileRemove, { path, ...rest }, { timeoutMs, signal }, DEFAULT_TIMEOUTS_MS.control);
}

/** Extracts a tar archive (streamed) into a guest directory, created if missing. */
export function extractTar(session: AgentSession, dir: string, archive: FileSource, options: ExtractTarOptions = {}): Promise<ExtractResponse> {
  const path = `${ROUTES.fileExtract}${query(dir, options.gzip ? { gzip: '1' } : {})}`;
  return upload<ExtractResponse>(session, 'extractTar', path, archive, options, 'POST');
}
