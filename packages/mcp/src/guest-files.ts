/**
 * Files in a sandbox: paths, directory listings and what a file's bytes are (text, an image, other).
 *
 * Listings come from the files API (`client.files.list`), which the guest agent answers.
 */
import { NotFoundError, SandboxdError, type FileEntry, type Sandboxd } from '@sandboxd/sdk';
import { ToolFailure } from './results.ts';

export const HOME = '/root';

/** An absolute path: relative paths are relative to /root, as uploads and runs take them. */
export function absoluteGuestPath(path: string): string {
  const absolute = path.startsWith('/') ? path : `${HOME}/${path}`;
  return absolute.length > 1 ? absolute.replace(/\/+$/, '') || '/' : absolute;
}

export interface DirectoryEntry {
  /** `file`, `directory`, `symlink` or `other`. */
  type: string;
  size: number;
  modified: string;
  path: string;
}

export interface Listing {
  path: string;
  /** The path is a file: the one entry is the file itself. */
  isFile: boolean;
  entries: DirectoryEntry[];
  /** More entries than `limit` exist. */
  truncated: boolean;
}

/** `YYYY-MM-DD HH:MM` (UTC) from the API's ISO time: short, and what the listing lines have always shown. */
function minutesOf(iso: string): string {
  return iso.slice(0, 16).replace('T', ' ');
}

function entryOf(entry: FileEntry): DirectoryEntry {
  return { type: entry.type, size: entry.size, modified: minutesOf(entry.modified_at), path: entry.path };
}

/**
 * Lists a directory (`depth` levels, `limit` entries, sorted by name, each directory followed by its contents), or
 * describes a file. Through the files API, which reads the directory through the guest agent: not a command run, so
 * it neither counts against the execution rate limit nor leaves execution records.
 */
export async function listGuestPath(
  client: Sandboxd,
  sessionId: string,
  path: string,
  options: { depth: number; limit: number; signal?: AbortSignal },
): Promise<Listing> {
  const target = absoluteGuestPath(path);
  const signal = options.signal ? { signal: options.signal } : {};
  try {
    const listing = await client.files.list(sessionId, target, { depth: options.depth, limit: options.limit, ...signal });
    return { path: target, isFile: false, entries: listing.entries.map(entryOf), truncated: listing.truncated };
  } catch (error) {
    // A session that is not the caller's is a 404 too; its message names the session, a missing path's the path.
    if (error instanceof NotFoundError && !error.message.includes(`session ${sessionId}`))
      throw new ToolFailure('NO_SUCH_FILE', `No file or directory ${target} in sandbox ${sessionId}`);
    // 409: not a directory. What is there is described instead, as `ls` would.
    if (!(error instanceof SandboxdError) || error.status !== 409) throw error;
  }
  const entry = await client.files.stat(sessionId, target, signal);
  return { path: target, isFile: true, entries: [entryOf(entry)], truncated: false };
}

/** A listing as lines a model reads easily: type, size, modification time, path. */
export function listingText(listing: Listing): string {
  if (listing.isFile) {
    const file = listing.entries[0]!;
    return `${listing.path} is a ${file.type} of ${file.size} bytes, modified ${file.modified}.`;
  }
  if (listing.entries.length === 0) return `${listing.path} is an empty directory.`;
  const lines = listing.entries.map(
    (e) =>
      `${e.type === 'directory' ? 'dir ' : e.type === 'symlink' ? 'link' : e.type === 'file' ? 'file' : 'othr'}  ${String(e.size).padStart(10)}  ${e.modified}  ${e.path}${e.type === 'directory' ? '/' : ''}`,
  );
  const more = listing.truncated ? `\n[truncated: more entries than the ${listing.entries.length} shown; list a subdirectory or raise limit]` : '';
  return `${listing.path}/ (${listing.entries.length} entr${listing.entries.length === 1 ? 'y' : 'ies'}: type, bytes, modified, path)\n${lines.join('\n')}${more}`;
}

/** An image's media type from its first bytes, or null. */
export function imageTypeOf(bytes: Uint8Array): string | null {
  const starts = (...prefix: number[]) => prefix.every((b, i) => bytes[i] === b);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (starts(0x47, 0x49, 0x46, 0x38)) return 'image/gif';
  if (starts(0x52, 0x49, 0x46, 0x46) && bytes[8] === 0x57 && bytes[9] === 0x45 && bytes[10] === 0x42 && bytes[11] === 0x50) return 'image/webp';
  return null;
}

/** The bytes as UTF-8 text, or null when they are not text (invalid UTF-8, or NUL bytes). */
export function asText(bytes: Uint8Array): string | null {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return text.includes('\u0000') ? null : text;
  } catch {
    return null;
  }
}

/** A guess at a text file's media type from its name (for resources). */
export function textMimeTypeOf(path: string): string {
  const extension = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase();
  const known: Record<string, string> = {
    py: 'text/x-python',
    json: 'application/json',
    md: 'text/markdown',
    html: 'text/html',
    htm: 'text/html',
    css: 'text/css',
    js: 'text/javascript',
    mjs: 'text/javascript',
    ts: 'text/x-typescript',
    csv: 'text/csv',
    xml: 'application/xml',
    yaml: 'application/yaml',
    yml: 'application/yaml',
    sh: 'text/x-shellscript',
  };
  return (extension && known[extension]) || 'text/plain';
}
