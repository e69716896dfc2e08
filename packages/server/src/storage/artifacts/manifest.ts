/**
 * The manifest: the one object that makes an artifact exist, written after every chunk it names. It lists each
 * file's chunks in order (fixed size `chunkBytes`, the last one shorter; `null` for an all-zero chunk, which is
 * never stored and comes back as a hole) with SHA-256 checksums of every chunk and of every whole file.
 */
import { ARTIFACT_KINDS, assertArtifactFileName, isSha256Hex, type ArtifactKind, type ArtifactRef } from './artifact-ref.ts';

export interface ArtifactFile {
  /** Relative path inside the artifact's directory. */
  name: string;
  size: number;
  /** Permission bits (`mode & 0o7777`), set again on download. */
  mode: number;
  /** SHA-256 of the whole file, hex. */
  sha256: string;
  /** Each chunk's SHA-256 in file order; null = an all-zero chunk (a hole), never stored. */
  chunks: (string | null)[];
}

export interface ArtifactManifest {
  version: 1;
  kind: ArtifactKind;
  id: string;
  /** The size of every chunk but each file's last. */
  chunkBytes: number;
  /** ISO 8601, when the upload finished. */
  createdAt: string;
  /** Who it belongs to (null: no user, e.g. a template) and the node that uploaded it. */
  owner: { userId: number | null; nodeId: string };
  files: ArtifactFile[];
  /** Free-form JSON the engine keeps with it (backing-chain links, the snapshot's own manifest). */
  meta: Record<string, unknown>;
  /** Sum of file sizes. */
  logicalBytes: number;
  /** Sum of the lengths of non-zero chunks: what a download moves. */
  dataBytes: number;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

/**
 * Parses a stored manifest and checks its shape (a chunk list that does not fit the file's size, a bad checksum
 * or a name that could leave the target directory would otherwise reach the file system). Returns the reason it
 * is not one as a string.
 */
export function parseManifest(bytes: Buffer, ref: ArtifactRef): ArtifactManifest | string {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    return `it is not JSON (${(error as Error).message})`;
  }
  if (!isObject(value)) return 'it is not a JSON object';
  if (value.version !== 1) return `its version ${JSON.stringify(value.version)} is not 1`;
  if (value.kind !== ref.kind || value.id !== ref.id) return `it names ${String(value.kind)}/${String(value.id)}`;
  if (!ARTIFACT_KINDS.includes(value.kind as ArtifactKind)) return 'its kind is unknown';
  const chunkBytes = value.chunkBytes;
  if (!isCount(chunkBytes) || chunkBytes === 0) return 'its chunkBytes is not a positive integer';
  if (typeof value.createdAt !== 'string' || !isObject(value.owner) || !isObject(value.meta) || !Array.isArray(value.files)) return 'a field is missing';
  const { userId, nodeId } = value.owner;
  if (!(userId === null || Number.isSafeInteger(userId)) || typeof nodeId !== 'string') return 'its owner is not { userId, nodeId }';
  let logicalBytes = 0;
  let dataBytes = 0;
  const names = new Set<string>();
  for (const file of value.files as unknown[]) {
    if (!isObject(file) || typeof file.name !== 'string') return 'a file has no name';
    try {
      assertArtifactFileName(file.name);
    } catch {
      return `file ${JSON.stringify(file.name)} has a bad name`;
    }
    if (names.has(file.name)) return `file ${file.name} is listed twice`;
    names.add(file.name);
    const { size, mode, sha256, chunks } = file;
    if (!isCount(size) || !isCount(mode) || mode > 0o7777 || !isSha256Hex(sha256) || !Array.isArray(chunks)) return `file ${file.name} is malformed`;
    if (chunks.length !== Math.ceil(size / chunkBytes)) return `file ${file.name} has ${chunks.length} chunks for ${size} bytes`;
    for (const [index, chunk] of chunks.entries()) {
      if (chunk === null) continue;
      if (!isSha256Hex(chunk)) return `file ${file.name} chunk ${index} is not a SHA-256`;
      dataBytes += Math.min(chunkBytes, size - index * chunkBytes);
    }
    logicalBytes += size;
  }
  if (value.logicalBytes !== logicalBytes || value.dataBytes !== dataBytes) return 'its byte counts do not match its files';
  return value as unknown as ArtifactManifest;
}
