/**
 * POST /upload and /download: files into and out of a session's VM; /v1/sessions/{id}/files…: list, stat, exists,
 * mkdir, remove and rename there (E2B's `files.list/getInfo/exists/makeDir/remove/rename`).
 */
import type { FileEntry, FileListing, FileWatchEvent, UploadResult } from '../api-types.ts';
import { multipartBody } from '../multipart.ts';
import { NDJSON, ndjsonEvents } from '../ndjson.ts';
import { encodeBase64 } from '../base64.ts';
import type { Transport } from '../transport.ts';

/**
 * What can be uploaded: bytes, a Blob, or text (UTF-8). A Blob is sent as it is read: in Node.js `fs.openAsBlob(path)`
 * uploads a file of any size in a few MiB of memory (above 4 MiB the client sends it through node:http, as Node's
 * fetch would hold the whole body: nodejs/undici#4058); browsers stream a Blob themselves.
 */
export type UploadData = Uint8Array | ArrayBuffer | Blob | string;

/** Uploads above this size are streamed in Node.js (`multipart.ts`, `node-request.ts`); smaller ones go as FormData. */
const STREAM_ABOVE_BYTES = 4 * 2 ** 20;

export interface UploadOptions {
  /** Unpack `data` (a tar archive, gzip allowed) at `remotePath`. */
  recursive?: boolean;
  /** File name sent with the data (default: the last part of remotePath). */
  filename?: string;
  signal?: AbortSignal;
}

function toBlob(data: UploadData): Blob {
  if (data instanceof Blob) return data;
  if (typeof data === 'string') return new Blob([data]);
  // Copy into a plain ArrayBuffer-backed view: Blob does not take shared memory.
  const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return new Blob([bytes.slice()]);
}

export interface MkdirOptions {
  /** Make missing parent directories too, like `mkdir -p` (default true). */
  parents?: boolean;
  signal?: AbortSignal;
}

export interface RemoveOptions {
  /** Remove a directory with everything in it (default false: only a file, a symlink or an empty directory). */
  recursive?: boolean;
  signal?: AbortSignal;
}

export interface RenameOptions {
  /** Replace what is at `to` (a file; a directory only by a directory, and only an empty one). Default false. */
  overwrite?: boolean;
  signal?: AbortSignal;
}

/** One file for `write`: text (UTF-8) or bytes, and its permission bits. */
export interface FileToWrite {
  path: string;
  data: string | Uint8Array;
  mode?: number;
}

export class Files {
  constructor(private readonly transport: Transport) {}

  /**
   * Writes several files into the session's VM in one call (missing parent directories are made; what was at a path
   * is replaced); answers each path, absolute, with its size. For large files use `upload`, which streams.
   */
  async write(sessionId: string, files: FileToWrite[], options: { signal?: AbortSignal } = {}): Promise<{ path: string; size: number }[]> {
    const body = files.map((file) => ({
      path: file.path,
      ...(typeof file.data === 'string' ? { content: file.data } : { content_base64: encodeBase64(file.data) }),
      ...(file.mode !== undefined ? { mode: file.mode } : {}),
    }));
    // Writing the same bytes to the same paths again changes nothing: safe to retry.
    return (
      await this.transport.call('/v1/sessions/{session_id}/files/write', 'post', {
        params: { session_id: sessionId },
        json: { files: body },
        kind: 'session',
        idempotent: true,
        ...options,
      })
    ).files;
  }

  /** Writes `data` to `remotePath` in the session's VM (absolute, or relative to /root; a trailing "/" keeps `filename`). */
  async upload(sessionId: string, data: UploadData, remotePath: string, options: UploadOptions = {}): Promise<UploadResult> {
    // Fields before the file, so the server can stream the file straight into the VM.
    const fields: [string, string][] = [
      ['session_id', sessionId],
      ['remote_path', remotePath],
      ['recursive', options.recursive ? 'true' : 'false'],
    ];
    const filename = options.filename ?? (remotePath.split('/').filter(Boolean).pop() || 'file');
    const blob = toBlob(data);
    // In Node.js a large file goes as a stream of its own (fetch would hold a FormData whole), with time for it: at
    // least 1 MiB/s on top of two minutes.
    const streamed = this.transport.settings.streamFetch !== undefined && blob.size > STREAM_ABOVE_BYTES;
    let form: FormData | undefined;
    if (!streamed) {
      form = new FormData();
      for (const [name, value] of fields) form.append(name, value);
      form.append('file', blob, filename);
    }
    // Writing the same bytes to the same path twice changes nothing: safe to retry.
    return (await this.transport.request('POST', '/upload', {
      ...(form ? { form } : { stream: multipartBody(fields, { name: 'file', filename, blob }), timeout: 120_000 + Math.ceil(blob.size / 2 ** 20) * 1000 }),
      kind: 'session',
      idempotent: true,
      ...(options.signal ? { signal: options.signal } : {}),
    })) as UploadResult;
  }

  /** The bytes of `remotePath` in the session's VM, whole in memory (sent raw, not base64). Large files: `downloadStream`. */
  async download(sessionId: string, remotePath: string, options: { signal?: AbortSignal } = {}): Promise<Uint8Array> {
    return (await this.transport.request('POST', '/download', this.downloadRequest(sessionId, remotePath, options), 'bytes')) as Uint8Array;
  }

  /**
   * The bytes of `remotePath` as a stream, for files of any size: neither the server nor this client holds the file
   * whole. Errors (a missing file, another user's session) reject here, before any byte; aborting `signal` ends the
   * stream. In Node.js, `pipeline(Readable.fromWeb(stream), fs.createWriteStream(path))` writes it to disk.
   */
  async downloadStream(sessionId: string, remotePath: string, options: { signal?: AbortSignal } = {}): Promise<ReadableStream<Uint8Array>> {
    const response = (await this.transport.request('POST', '/download', this.downloadRequest(sessionId, remotePath, options), 'stream')) as Response;
    return (response.body as ReadableStream<Uint8Array> | null) ?? new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
  }

  /**
   * Changes under directory `remotePath` of the session's VM as they happen (E2B's `watchDir`): a `start` event once
   * the watch is in place, then `create`, `write`, `remove`, `rename` (the old name; the new one comes as `create`),
   * `chmod`, and `end` when the directory goes. With `recursive`, the whole tree under it. It lasts until you leave
   * the loop (`break`) or abort `signal`. A missing path rejects with NotFoundError, a file with ConflictError.
   */
  async *watch(sessionId: string, remotePath: string, options: { recursive?: boolean; signal?: AbortSignal } = {}): AsyncGenerator<FileWatchEvent> {
    const response = (await this.transport.request(
      'GET',
      `/v1/sessions/${encodeURIComponent(sessionId)}/files/watch`,
      {
        query: { path: remotePath, recursive: options.recursive },
        headers: { accept: NDJSON },
        // No `kind`: a 404 here is usually a missing directory, so it is a NotFoundError (the message says which).
        timeout: 2 ** 31 - 1,
        ...(options.signal ? { signal: options.signal } : {}),
      },
      'stream',
    )) as Response;
    yield* ndjsonEvents<FileWatchEvent>(response);
  }

  private downloadRequest(sessionId: string, remotePath: string, options: { signal?: AbortSignal }) {
    // No `kind`: a 404 here is usually a missing file, so it is a NotFoundError (the message says which).
    return { json: { filename: remotePath, session_id: sessionId }, headers: { accept: 'application/octet-stream' }, idempotent: true, ...options };
  }

  /**
   * The entries of directory `remotePath` in the session's VM (absolute, or relative to /root; default /root), sorted by
   * name; `depth` > 1 lists subdirectories too (each directory followed by its contents), at most `limit` entries
   * (`truncated` says when more were left out).
   */
  async list(sessionId: string, remotePath = '/root', options: { depth?: number; limit?: number; signal?: AbortSignal } = {}): Promise<FileListing> {
    const { depth, limit, ...rest } = options;
    return this.transport.call('/v1/sessions/{session_id}/files', 'get', {
      params: { session_id: sessionId },
      query: { path: remotePath, ...(depth !== undefined ? { depth } : {}), ...(limit !== undefined ? { limit } : {}) },
      ...rest,
    });
  }

  /** What is at `remotePath` (symlinks not followed). Nothing there: NotFoundError. */
  async stat(sessionId: string, remotePath: string, options: { signal?: AbortSignal } = {}): Promise<FileEntry> {
    return this.transport.call('/v1/sessions/{session_id}/files/stat', 'get', { params: { session_id: sessionId }, query: { path: remotePath }, ...options });
  }

  /** Whether anything (a file, a directory, a symlink, even a dangling one) is at `remotePath`. */
  async exists(sessionId: string, remotePath: string, options: { signal?: AbortSignal } = {}): Promise<boolean> {
    const answer = await this.transport.call('/v1/sessions/{session_id}/files/exists', 'get', {
      params: { session_id: sessionId },
      query: { path: remotePath },
      ...options,
    });
    return answer.exists;
  }

  /**
   * Makes directory `remotePath`; true when it made it, false when it was already there. A file in the way is a
   * 409 SandboxdError; without `parents`, a missing parent is a NotFoundError.
   */
  async mkdir(sessionId: string, remotePath: string, options: MkdirOptions = {}): Promise<boolean> {
    const { parents, signal } = options;
    const answer = await this.transport.call('/v1/sessions/{session_id}/files/mkdir', 'post', {
      params: { session_id: sessionId },
      json: { path: remotePath, ...(parents === undefined ? {} : { parents }) },
      // Making a directory that is there already changes nothing: safe to retry.
      idempotent: true,
      ...(signal ? { signal } : {}),
    });
    return answer.created;
  }

  /**
   * Removes `remotePath` (a symlink itself, not its target); true when something was removed, false when nothing
   * was there. A directory that is not empty, without `recursive`, is a 409 SandboxdError; `/` is refused (400).
   */
  async remove(sessionId: string, remotePath: string, options: RemoveOptions = {}): Promise<boolean> {
    const { recursive, signal } = options;
    const answer = await this.transport.call('/v1/sessions/{session_id}/files', 'delete', {
      params: { session_id: sessionId },
      query: { path: remotePath, ...(recursive === undefined ? {} : { recursive }) },
      ...(signal ? { signal } : {}),
    });
    return answer.removed;
  }

  /**
   * Moves `from` to `to` (the new path itself, never a directory to move into) and answers what is at `to` then.
   * Something at `to` without `overwrite` is a 409 SandboxdError; a missing `from` (or directory of `to`), a NotFoundError.
   */
  async rename(sessionId: string, from: string, to: string, options: RenameOptions = {}): Promise<FileEntry> {
    const { overwrite, signal } = options;
    // Not marked idempotent: a retry after a move that went through would find `from` gone (404).
    return this.transport.call('/v1/sessions/{session_id}/files/rename', 'post', {
      params: { session_id: sessionId },
      json: { from, to, ...(overwrite === undefined ? {} : { overwrite }) },
      ...(signal ? { signal } : {}),
    });
  }
}
