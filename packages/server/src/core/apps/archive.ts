/**
 * Reads an uploaded app archive (a gzipped tar) on the host WITHOUT extracting it: its entries are listed by the
 * `tar` library from the temporary file, each checked (no absolute path, no `..`, no device, FIFO or link leaving
 * the folder), and the manifest's bytes are read from its entry. The archive is extracted inside the app's VM.
 */
import { list, type ReadEntry } from 'tar';
import { badRequest } from '../errors.ts';
import { MANIFEST_NAMES } from './manifest.ts';

/** Largest manifest read. */
const MANIFEST_MAX_BYTES = 256 * 1024;
/** Most entries an archive may hold. */
const MAX_ENTRIES = 100_000;
const REFUSED_TYPES = new Set(['CharacterDevice', 'BlockDevice', 'FIFO']);

export interface ArchiveManifest {
  fileName: string;
  text: string;
  entries: number;
}

function escapes(path: string): boolean {
  return path.startsWith('/') || path.split('/').includes('..');
}

/** The root-relative path of an entry (`./a/b` → `a/b`, `./` → ``). */
function relative(path: string): string {
  return path.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
}

/** Lists the archive at `file` and answers its manifest; BAD_REQUEST for an unsafe entry or no manifest. */
export async function readArchiveManifest(file: string): Promise<ArchiveManifest> {
  const found = new Map<string, Buffer>();
  let entries = 0;
  let problem: string | null = null;
  const onReadEntry = (entry: ReadEntry) => {
    entries += 1;
    const path = entry.path;
    if (problem) return;
    if (entries > MAX_ENTRIES) problem = `the archive has more than ${MAX_ENTRIES} entries`;
    else if (escapes(path)) problem = `the archive's entry ${path} leaves the folder (absolute path or ..)`;
    else if (REFUSED_TYPES.has(entry.type)) problem = `the archive's entry ${path} is a ${entry.type}: only files, folders and links are accepted`;
    else if ((entry.type === 'SymbolicLink' || entry.type === 'Link') && entry.linkpath && escapes(entry.linkpath))
      problem = `the archive's link ${path} points outside the folder (${entry.linkpath})`;
    const name = relative(path);
    if (!problem && entry.type === 'File' && (MANIFEST_NAMES as readonly string[]).includes(name)) {
      if ((entry.size ?? 0) > MANIFEST_MAX_BYTES) problem = `${name} is larger than ${MANIFEST_MAX_BYTES} bytes`;
      else {
        const chunks: Buffer[] = [];
        entry.on('data', (chunk: Buffer) => chunks.push(chunk));
        entry.on('end', () => found.set(name, Buffer.concat(chunks)));
      }
    }
  };
  try {
    await list({ file, onReadEntry, strict: true });
  } catch (error) {
    throw badRequest(`the body is not a gzipped tar archive of the app's folder: ${(error as Error).message}`);
  }
  if (problem) throw badRequest(problem);
  for (const name of MANIFEST_NAMES) {
    const bytes = found.get(name);
    if (bytes) return { fileName: name, text: bytes.toString('utf8'), entries };
  }
  throw badRequest(`no manifest at the archive's root: add ${MANIFEST_NAMES[0]} (or ${MANIFEST_NAMES.slice(1).join(', ')}) with at least port and start`);
}
