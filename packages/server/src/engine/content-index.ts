/**
 * The SHA-256 of files no artifact holds (an image's root filesystem, kernel, initramfs), by path: what a snapshot
 * names them by in the object store, and how another node finds its own copy of the same bytes. Hashing a 1 GiB
 * root filesystem takes a couple of seconds, so each file is hashed once and remembered (with its size, mtime and
 * inode, which any rewrite changes) in a small JSON file beside the engine's state.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { sha256File } from '../image/hashing.ts';

interface Entry {
  size: number;
  mtimeMs: number;
  ino: number;
  sha256: string;
}

export class ContentIndex {
  private entries: Map<string, Entry> | undefined;
  /** Files this node has that may be asked for by content (its guest images' files), hashed only when asked. */
  private readonly candidates = new Set<string>();
  private readonly hashing = new Map<string, Promise<string>>();

  constructor(private readonly indexPath: string) {}

  /** A file whose content another node may ask for (this node's image files); hashed lazily. */
  offer(file: string): void {
    this.candidates.add(file);
  }

  /** The file's SHA-256 (hex), from the index while the file is unchanged. */
  hashOf(file: string): Promise<string> {
    const stat = fs.statSync(file);
    const known = this.load().get(file);
    if (known && sameFile(known, stat)) return Promise.resolve(known.sha256);
    let pending = this.hashing.get(file);
    if (!pending) {
      pending = sha256File(file)
        .then((sha256) => {
          this.load().set(file, { size: stat.size, mtimeMs: stat.mtimeMs, ino: stat.ino, sha256 });
          this.save();
          return sha256;
        })
        .finally(() => this.hashing.delete(file));
      this.hashing.set(file, pending);
    }
    return pending;
  }

  /** Records a file whose content is known (it was fetched and checked by its hash). */
  remember(file: string, sha256: string): void {
    const stat = fs.statSync(file);
    this.load().set(file, { size: stat.size, mtimeMs: stat.mtimeMs, ino: stat.ino, sha256 });
    this.save();
  }

  /** A local file with this content: one the index knows unchanged, else an offered file that hashes to it. */
  async find(sha256: string): Promise<string | null> {
    for (const [file, entry] of this.load()) {
      if (entry.sha256 !== sha256) continue;
      const stat = statOrNull(file);
      if (stat && sameFile(entry, stat)) return file;
    }
    for (const file of this.candidates) {
      if (!statOrNull(file)) continue;
      if ((await this.hashOf(file)) === sha256) return file;
    }
    return null;
  }

  private load(): Map<string, Entry> {
    if (!this.entries) {
      try {
        this.entries = new Map(Object.entries(JSON.parse(fs.readFileSync(this.indexPath, 'utf8')) as Record<string, Entry>));
      } catch {
        this.entries = new Map();
      }
    }
    return this.entries;
  }

  private save(): void {
    const tmp = `${this.indexPath}.${randomBytes(4).toString('hex')}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(Object.fromEntries(this.load())), { mode: 0o600 });
    fs.renameSync(tmp, this.indexPath);
  }
}

function sameFile(entry: Entry, stat: fs.Stats): boolean {
  return entry.size === stat.size && entry.mtimeMs === stat.mtimeMs && entry.ino === stat.ino;
}

function statOrNull(file: string): fs.Stats | null {
  try {
    return fs.statSync(file);
  } catch {
    return null;
  }
}
