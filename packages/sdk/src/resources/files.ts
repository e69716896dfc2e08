/** POST /upload and /download: files into and out of a session's VM; GET …/files lists a directory. */
import type { FileListing, UploadResult } from '../api-types.ts';
import type { Transport } from '../transport.ts';

/** What can be uploaded: bytes, a Blob (in Node.js, `fs.openAsBlob(path)` streams a file), or text (UTF-8). */
export type UploadData = Uint8Array | ArrayBuffer | Blob | string;

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

export class Files {
  constructor(private readonly transport: Transport) {}

  /** Writes `data` to `remotePath` in the session's VM (absolute, or relative to /root; a trailing "/" keeps `filename`). */
  async upload(sessionId: string, data: UploadData, remotePath: string, options: UploadOptions = {}): Promise<UploadResult> {
    const form = new FormData();
    // Fields before the file, so the server can stream the file straight into the VM.
    form.append('session_id', sessionId);
    form.append('remote_path', remotePath);
    form.append('recursive', options.recursive ? 'true' : 'false');
    const filename = options.filename ?? (remotePath.split('/').filter(Boolean).pop() || 'file');
    form.append('file', toBlob(data), filename);
    // Writing the same bytes to the same path twice changes nothing: safe to retry.
    return (await this.transport.request('POST', '/upload', {
      form,
      kind: 'session',
      idempotent: true,
      ...(options.signal ? { signal: options.signal } : {}),
    })) as UploadResult;
  }

  /** The bytes of `remotePath` in the session's VM (streamed raw, not base64, for any size). */
  async download(sessionId: string, remotePath: string, options: { signal?: AbortSignal } = {}): Promise<Uint8Array> {
    return (await this.transport.request(
      'POST',
      '/download',
      // No `kind`: a 404 here is usually a missing file, so it is a NotFoundError (the message says which).
      { json: { filename: remotePath, session_id: sessionId }, headers: { accept: 'application/octet-stream' }, idempotent: true, ...options },
      'bytes',
    )) as Uint8Array;
  }

  /** The entries of directory `remotePath` in the session's VM (absolute, or relative to /root; default /root), sorted by name. */
  async list(sessionId: string, remotePath = '/root', options: { signal?: AbortSignal } = {}): Promise<FileListing> {
    return this.transport.call('/v1/sessions/{session_id}/files', 'get', { params: { session_id: sessionId }, query: { path: remotePath }, ...options });
  }
}
