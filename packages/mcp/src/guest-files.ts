/**
 * Files in a sandbox: paths, directory listings and what a file's bytes are (text, an image, other).
 *
 * The API has upload and download but no directory listing, so a listing runs GNU find in the sandbox through the
 * execute API as a bash command: same credentials, same authorization, and it shows up in the caller's execution
 * records like any other run.
 */
import type { Sandboxd } from '@sandboxd/sdk';
import { ToolFailure } from './results.ts';

export const HOME = '/root';

/** An absolute path: relative paths are relative to /root, as uploads and runs take them. */
export function absoluteGuestPath(path: string): string {
  const absolute = path.startsWith('/') ? path : `${HOME}/${path}`;
  return absolute.length > 1 ? absolute.replace(/\/+$/, '') || '/' : absolute;
}

/** A string as one bash word, whatever it holds. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
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

const TYPES: Record<string, string> = { f: 'file', d: 'directory', l: 'symlink' };
/** Exit code of the listing script for a path that does not exist. */
const MISSING = 44;

/** Lists a directory (`depth` levels, `limit` entries, sorted by path), or describes a file. */
export async function listGuestPath(
  client: Sandboxd,
  sessionId: string,
  path: string,
  options: { depth: number; limit: number; signal?: AbortSignal },
): Promise<Listing> {
  const target = absoluteGuestPath(path);
  const format = `'%y\\t%s\\t%TY-%Tm-%Td %TH:%TM\\t%p\\n'`;
  const script = [
    `p=${shellQuote(target)}`,
    `if [ ! -e "$p" ] && [ ! -L "$p" ]; then echo "no such file or directory: $p" >&2; exit ${MISSING}; fi`,
    `if [ ! -d "$p" ]; then find "$p" -maxdepth 0 -printf ${format}; exit 0; fi`,
    `find "$p" -mindepth 1 -maxdepth ${options.depth} -printf ${format} 2>/dev/null | LC_ALL=C sort -t "$(printf '\\t')" -k4,4 | head -n ${options.limit + 1}`,
  ].join('\n');
  const result = await client.execute(script, { sessionId, language: 'bash', timeout: 60, ...(options.signal ? { signal: options.signal } : {}) });
  if (result.exit_code === MISSING) throw new ToolFailure('NO_SUCH_FILE', `No file or directory ${target} in sandbox ${sessionId}`);
  if (result.exit_code !== 0)
    throw new ToolFailure('LISTING_FAILED', `Listing ${target} failed (exit code ${result.exit_code}): ${result.stderr.trim().slice(0, 500)}`);
  const entries = result.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line): DirectoryEntry => {
      const [type = '', size = '0', modified = '', ...rest] = line.split('\t');
      return { type: TYPES[type] ?? 'other', size: Number(size), modified, path: rest.join('\t') };
    });
  const isFile = entries.length === 1 && entries[0]!.path === target && entries[0]!.type !== 'directory';
  return { path: target, isFile, entries: entries.slice(0, options.limit), truncated: entries.length > options.limit };
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
