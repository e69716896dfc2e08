/**
 * Upload: each file is read in order, chunk by chunk (holes of a sparse file read as zeros), hashed whole and per
 * chunk; an all-zero chunk is recorded as null and never sent; a chunk the store already has is not sent again
 * (the in-process set first, then a HEAD); at most `concurrency` chunks are in flight (and in memory). The
 * manifest is written last, once every chunk it names is stored.
 */
import { createHash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { artifactLabel, assertArtifactFileName, assertArtifactRef, chunkKey, manifestKey, type ArtifactRef } from './artifact-ref.ts';
import type { ArtifactFile, ArtifactManifest } from './manifest.ts';
import type { ArtifactStoreContext } from './store-context.ts';
import { TaskWindow } from './task-window.ts';

export interface UploadFile {
  /** Its name inside the artifact (and in the directory a download makes): `[A-Za-z0-9._-]` segments joined by `/`. */
  name: string;
  /** Where it is read from now. */
  path: string;
}

export interface UploadOptions {
  owner: { userId: number | null; nodeId: string };
  meta?: Record<string, unknown>;
  /** Bytes of the files read and stored (or found stored) so far, out of their total size. */
  onProgress?(done: number, total: number): void;
  signal?: AbortSignal;
}

const CHUNK_CONTENT_TYPE = 'application/octet-stream';

export async function uploadArtifact(
  context: ArtifactStoreContext,
  ref: ArtifactRef,
  files: UploadFile[],
  options: UploadOptions,
): Promise<ArtifactManifest & { uploadedBytes: number; reusedBytes: number }> {
  assertArtifactRef(ref);
  assertFileNames(files.map((file) => file.name));
  const { signal } = options;
  const doing = `uploading ${artifactLabel(ref)}`;
  const zeros = Buffer.alloc(context.chunkBytes);
  // Chunks being stored by this upload: a second chunk with the same bytes waits for the first instead of sending them again.
  const inFlight = new Map<string, Promise<boolean>>();
  let uploadedBytes = 0;
  let reusedBytes = 0;
  let doneBytes = 0;

  const handles: { file: UploadFile; handle: FileHandle; size: number; mode: number }[] = [];
  const window = new TaskWindow(context.concurrency);
  try {
    for (const file of files) {
      const handle = await open(file.path, 'r');
      handles.push({ file, handle, size: 0, mode: 0 });
      const stats = await handle.stat();
      if (!stats.isFile()) throw new Error(`${doing}: ${file.path} is not a regular file`);
      Object.assign(handles.at(-1)!, { size: stats.size, mode: stats.mode & 0o7777 });
    }
    const totalBytes = handles.reduce((sum, each) => sum + each.size, 0);
    const progress = (bytes: number) => {
      doneBytes += bytes;
      options.onProgress?.(doneBytes, totalBytes);
    };

    /** Stores one chunk unless it is known or found stored; true when its bytes were sent. */
    const storeChunk = async (sha256: string, bytes: Buffer): Promise<boolean> => {
      if (context.knownChunks.has(sha256)) return false;
      const key = chunkKey(sha256);
      const stored = await context.call(doing, () => context.objects.head(key), signal);
      // A chunk's size is part of its identity only through its hash; a stored object of another size is a torn
      // write of some other tool (or a collision of keys we did not make): send ours over it.
      if (stored?.size !== bytes.length) await context.call(doing, () => context.objects.put(key, bytes, { contentType: CHUNK_CONTENT_TYPE }), signal);
      context.knownChunks.add(sha256);
      return stored?.size !== bytes.length;
    };

    const manifestFiles: ArtifactFile[] = [];
    for (const { file, handle, size, mode } of handles) {
      const fileHash = createHash('sha256');
      const chunks: (string | null)[] = [];
      for (let offset = 0; offset < size; offset += context.chunkBytes) {
        signal?.throwIfAborted();
        const bytes = await readChunk(handle, offset, Math.min(context.chunkBytes, size - offset), file.path);
        fileHash.update(bytes);
        if (bytes.equals(zeros.subarray(0, bytes.length))) {
          chunks.push(null);
          progress(bytes.length);
          continue;
        }
        const sha256 = createHash('sha256').update(bytes).digest('hex');
        chunks.push(sha256);
        await window.add(async () => {
          let sending = inFlight.get(sha256);
          const first = !sending;
          if (!sending) {
            sending = storeChunk(sha256, bytes);
            inFlight.set(sha256, sending);
          }
          const sent = await sending;
          if (first && sent) uploadedBytes += bytes.length;
          else reusedBytes += bytes.length;
          progress(bytes.length);
        });
      }
      manifestFiles.push({ name: file.name, size, mode, sha256: fileHash.digest('hex'), chunks });
    }
    await window.drain();
    signal?.throwIfAborted();

    const manifest: ArtifactManifest = {
      version: 1,
      kind: ref.kind,
      id: ref.id,
      chunkBytes: context.chunkBytes,
      createdAt: new Date().toISOString(),
      owner: { userId: options.owner.userId, nodeId: options.owner.nodeId },
      files: manifestFiles,
      meta: options.meta ?? {},
      logicalBytes: manifestFiles.reduce((sum, file) => sum + file.size, 0),
      dataBytes: manifestFiles.reduce(
        (sum, file) =>
          sum +
          file.chunks.reduce(
            (bytes, chunk, index) => (chunk === null ? bytes : bytes + Math.min(context.chunkBytes, file.size - index * context.chunkBytes)),
            0,
          ),
        0,
      ),
    };
    const body = Buffer.from(JSON.stringify(manifest));
    await context.call(doing, () => context.objects.put(manifestKey(ref), body, { contentType: 'application/json' }), signal);
    return { ...manifest, uploadedBytes, reusedBytes };
  } finally {
    // Nothing may still read a file or send a chunk once the caller hears of the failure.
    await window.settle();
    await Promise.all(handles.map(({ handle }) => handle.close().catch(() => undefined)));
  }
}

/** Throws unless every name is valid, none is repeated, and none is a directory of another (`a` and `a/b`). */
function assertFileNames(names: string[]): void {
  const seen = new Set<string>();
  for (const name of names) {
    assertArtifactFileName(name);
    if (seen.has(name)) throw new Error(`artifact file ${name} is listed twice`);
    seen.add(name);
  }
  for (const name of names) {
    const segments = name.split('/');
    for (let depth = 1; depth < segments.length; depth++) {
      const parent = segments.slice(0, depth).join('/');
      if (seen.has(parent)) throw new Error(`artifact file ${parent} cannot also be the directory of ${name}`);
    }
  }
}

/** Reads `length` bytes at `offset` into a new buffer (the upload holds on to it until the chunk is stored). */
async function readChunk(handle: FileHandle, offset: number, length: number, filePath: string): Promise<Buffer> {
  const bytes = Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(bytes, filled, length - filled, offset + filled);
    if (bytesRead === 0) throw new Error(`${filePath} ended at ${offset + filled} bytes while it was being uploaded: it must not change during the upload`);
    filled += bytesRead;
  }
  return bytes;
}
