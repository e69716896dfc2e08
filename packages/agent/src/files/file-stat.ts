/** Turns `lstat` results into the protocol's {@link FileStat}. */
import type { Stats } from 'node:fs';
import { lstat, readlink } from 'node:fs/promises';
import { posix } from 'node:path';
import type { FileStat, FileType } from '../protocol/messages.ts';

/** The protocol's type of a stat result. */
export function fileTypeOf(stats: Stats): FileType {
  if (stats.isFile()) return 'file';
  if (stats.isDirectory()) return 'directory';
  if (stats.isSymbolicLink()) return 'symlink';
  return 'other';
}

/** Stats a path without following a final symlink. */
export async function statPath(path: string): Promise<FileStat> {
  const stats = await lstat(path);
  const info: FileStat = {
    path,
    name: posix.basename(path) || '/',
    type: fileTypeOf(stats),
    size: stats.size,
    mode: stats.mode & 0o7777,
    mtimeMs: stats.mtimeMs,
  };
  if (info.type === 'symlink') info.symlinkTarget = await readlink(path).catch(() => '');
  return info;
}
