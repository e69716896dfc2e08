/** File helpers of backup and restore: walking a tree, copying into a staging folder, progress on stderr. */
import fs from 'node:fs';
import path from 'node:path';

/** Every regular file under `root`, as paths relative to it (sorted; symbolic links and the like are skipped). */
export async function listFiles(root: string, skip: (relative: string) => boolean = () => false): Promise<string[]> {
  const found: string[] = [];
  const walk = async (relative: string): Promise<void> => {
    let entries: fs.Dirent[];
    try {
      entries = await fs.promises.readdir(path.join(root, relative), { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const entry of entries) {
      const child = relative ? path.join(relative, entry.name) : entry.name;
      if (skip(child)) continue;
      if (entry.isDirectory()) await walk(child);
      else if (entry.isFile()) found.push(child);
    }
  };
  await walk('');
  return found.sort();
}

/**
 * Makes `to` (and its parents up to `toRoot`) like the matching folders under `fromRoot`: same mode and, when
 * run as root, same owner, so that the archive, and the restore, keep them (the VM user traverses volumes').
 */
export async function mirrorDirs(fromRoot: string, toRoot: string, relativeDir: string, made: Set<string>): Promise<void> {
  const parts = relativeDir === '' || relativeDir === '.' ? [] : relativeDir.split(path.sep);
  for (let depth = 0; depth <= parts.length; depth++) {
    const relative = parts.slice(0, depth).join(path.sep);
    if (made.has(relative)) continue;
    const source = await fs.promises.stat(path.join(fromRoot, relative));
    const target = path.join(toRoot, relative);
    await fs.promises.mkdir(target, { recursive: true });
    await fs.promises.chmod(target, source.mode & 0o7777);
    if (process.getuid?.() === 0) await fs.promises.chown(target, source.uid, source.gid);
    made.add(relative);
  }
}

/**
 * Puts a copy of `from` at `to`. `immutable`: the file is never written in place (replaced by rename), so a
 * hard link is a faithful copy that costs no space; otherwise (or across file systems) the bytes are copied
 * (a reflink where the file system has them).
 */
export async function stageFile(from: string, to: string, immutable: boolean): Promise<void> {
  await fs.promises.mkdir(path.dirname(to), { recursive: true, mode: 0o700 });
  if (immutable) {
    try {
      await fs.promises.link(from, to);
      return;
    } catch (error) {
      if (!['EXDEV', 'EPERM', 'EMLINK'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
    }
  }
  await fs.promises.copyFile(from, to, fs.constants.COPYFILE_FICLONE);
  const source = await fs.promises.stat(from);
  await fs.promises.chmod(to, source.mode & 0o777);
  if (process.getuid?.() === 0) await fs.promises.chown(to, source.uid, source.gid);
}

/** Moves a file or folder: a rename, or a copy and removal across file systems. */
export async function move(from: string, to: string): Promise<void> {
  try {
    await fs.promises.rename(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    await fs.promises.cp(from, to, { recursive: true, preserveTimestamps: true, errorOnExist: true, force: false });
    await fs.promises.rm(from, { recursive: true, force: true });
  }
}

/** True when `dir` exists and holds anything. */
export function hasEntries(dir: string): boolean {
  try {
    return fs.readdirSync(dir).length > 0;
  } catch {
    return false;
  }
}

/** Human sizes for progress lines. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** Progress lines on stderr, at most one a second unless forced (a folder's last line). */
export function progressLines(): (line: string, force?: boolean) => void {
  let lastMs = 0;
  return (line, force = false) => {
    const now = Date.now();
    if (!force && now - lastMs < 1000) return;
    lastMs = now;
    process.stderr.write(`${line}\n`);
  };
}

/** A UTC timestamp usable in a file name: 2026-11-27T06-15-20Z. */
export function fileTimestamp(date = new Date()): string {
  return date
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/:/g, '-');
}
