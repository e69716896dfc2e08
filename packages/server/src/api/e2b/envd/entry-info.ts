/**
 * Files as envd names them: paths relative to the calling account's home, and sandboxd's `FileStat` as envd's
 * `EntryInfo` (its permission string in Go's `FileMode.String()` form, which E2B's SDKs show as they get it).
 */
import path from 'node:path/posix';
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import type { FileStat } from '@sandboxd/agent/protocol';
import type { PathOwner } from '../../../core/file-owners.ts';
import { EntryInfoSchema, FileType, type EntryInfo } from './gen/filesystem/filesystem_pb.ts';

/** An account's home in E2B's templates: `/root` for root, `/home/<name>` for any other. */
export function homeOf(user: string): string {
  return user === 'root' ? '/root' : `/home/${user}`;
}

/** A path as the SDK gives it, made absolute: a relative one (or none) is the account's home's. */
export function absolutePathFor(given: string, user: string): string {
  return path.resolve(homeOf(user), given);
}

const FILE_TYPES: Record<FileStat['type'], FileType> = {
  file: FileType.FILE,
  directory: FileType.DIRECTORY,
  symlink: FileType.SYMLINK,
  other: FileType.UNSPECIFIED,
};

/** `drwxr-xr-x`, `-rw-r--r--`, `Lrwxrwxrwx`, `urwxr-xr-x`: Go's `FileMode.String()` of a stat result. */
export function permissionsOf(stat: Pick<FileStat, 'type' | 'mode'>): string {
  let kinds = '';
  if (stat.type === 'directory') kinds += 'd';
  if (stat.type === 'symlink') kinds += 'L';
  if (stat.mode & 0o4000) kinds += 'u';
  if (stat.mode & 0o2000) kinds += 'g';
  if (stat.mode & 0o1000) kinds += 't';
  let bits = '';
  for (let shift = 8; shift >= 0; shift--) bits += stat.mode & (1 << shift) ? 'rwx'[(8 - shift) % 3] : '-';
  return (kinds || '-') + bits;
}

/** envd's entry of a stat result; its owner and group when known. */
export function entryInfoOf(stat: FileStat, owner: PathOwner | undefined): EntryInfo {
  return create(EntryInfoSchema, {
    name: stat.name,
    type: FILE_TYPES[stat.type],
    path: stat.path,
    size: BigInt(stat.size),
    mode: stat.mode & 0o777,
    permissions: permissionsOf(stat),
    owner: owner?.owner ?? '',
    group: owner?.group ?? '',
    modifiedTime: timestampFromMs(Math.floor(stat.mtimeMs)),
    ...(stat.symlinkTarget !== undefined ? { symlinkTarget: stat.symlinkTarget } : {}),
  });
}
