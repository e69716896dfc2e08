/**
 * Files in and out of a session's VM, streamed end to end (request → agent, agent → response): nothing
 * is buffered whole on the host except a download answered as base64 JSON, which has its own limit.
 */
import path from 'node:path/posix';
import { Readable } from 'node:stream';
import type { Principal } from './authenticator.ts';
import type { Clock } from './clock.ts';
import { AppError } from './errors.ts';
import { recordEvent, type EventNotifier } from './events.ts';
import type { SessionService } from './sessions.ts';
import type { VmService } from './vms/index.ts';
import type { Database } from '../store/database.ts';
import type { FileStat } from '@sandboxd/agent/protocol';
import type { GuestAgent } from './vm-engine.ts';
import { watchDirectory, type WatchEvent, type WatchNotice } from './file-watch.ts';
import { checkAccountName, chownTo, makeDirectoriesAs, ownersOf, type PathOwner } from './file-owners.ts';

/** What is at `target`, or null when nothing is (any other failure throws). */
async function statOrNull(agent: GuestAgent, target: string): Promise<FileStat | null> {
  try {
    return await agent.stat(target);
  } catch (error) {
    if (error instanceof AppError && error.code === 'NOT_FOUND') return null;
    throw error;
  }
}

/** Where relative guest paths are resolved: the guest user's home. */
export const GUEST_HOME = '/root';

/** Resolves a user-given guest path: absolute as given, relative against the guest home; no NUL bytes. */
export function resolveGuestPath(given: string): string {
  if (given.includes('\0')) throw new AppError('BAD_REQUEST', 'the path contains a NUL byte');
  if (given.trim() === '') throw new AppError('BAD_REQUEST', 'the path is empty');
  return path.resolve(GUEST_HOME, given);
}

/** The error code of what `mv` printed when it failed. */
function moveFailureCode(message: string): 'NOT_FOUND' | 'CONFLICT' | 'BAD_REQUEST' {
  if (/No such file or directory/i.test(message)) return 'NOT_FOUND';
  if (/cannot overwrite|Directory not empty|File exists|Not a directory|Is a directory/i.test(message)) return 'CONFLICT';
  return 'BAD_REQUEST';
}

/** A move across filesystems copies: a generous bound, as for a large upload. */
const RENAME_TIMEOUT_MS = 10 * 60_000;
/** Directory watches one session may hold open at once (each is a watcher process in its VM). */
const MAX_WATCHES_PER_SESSION = 16;

export class FileService {
  /** Open watches per session, on this node. */
  private readonly watches = new Map<string, number>();

  constructor(
    private readonly database: Database,
    private readonly sessions: SessionService,
    private readonly vms: VmService,
    private readonly clock: Clock,
    private readonly notifier: EventNotifier,
  ) {}

  /**
   * Writes `body` to `remotePath` in the session's VM, or unpacks it there as a tar archive when `recursive`. With
   * `owner` (a guest account; not with `recursive`), missing parent directories are made as that account and the
   * file is given to it (file-owners.ts).
   */
  async upload(
    principal: Principal,
    sessionId: string,
    input: { remotePath: string; filename: string | null; recursive: boolean; body: Readable; owner?: string },
  ): Promise<{ path: string; size: number | null; recursive: boolean; vmId: string }> {
    const session = await this.sessions.getOwned(principal, sessionId);
    let target = resolveGuestPath(input.remotePath);
    // A path ending in "/" names a directory: the file keeps its own name inside it.
    if (!input.recursive && input.remotePath.endsWith('/') && input.filename) target = path.join(target, path.basename(input.filename));
    if (input.owner) checkAccountName(input.owner);
    const { vm, agent } = await this.vms.ensureVm(principal, session);
    let size: number | null = null;
    if (input.recursive) {
      await agent.extractTar(target, input.body, { gzip: input.filename ? /\.(tgz|tar\.gz)$/i.test(input.filename) : false });
    } else if (input.owner && input.owner !== 'root') {
      if (!(await statOrNull(agent, path.dirname(target)))) await makeDirectoriesAs(agent, path.dirname(target), input.owner);
      size = (await agent.writeFile(target, input.body)).size;
      await chownTo(agent, target, input.owner);
    } else {
      size = (await agent.writeFile(target, input.body)).size;
    }
    await recordEvent(this.database.db, this.clock, {
      type: 'file.uploaded',
      userId: principal.userId,
      subjectId: session.id,
      data: { session_id: session.id, vm_id: vm.id, path: target, size, recursive: input.recursive },
    });
    this.notifier.committed();
    return { path: target, size, recursive: input.recursive, vmId: vm.id };
  }

  /**
   * Writes several files into the session's VM in one call (E2B's `files.write([...])`): every path is checked
   * before anything is written, missing parent directories are made, each file replaces what was at its path. Files
   * are written in order; one that fails stops the call with its error (those before it stay written).
   */
  async writeMany(
    principal: Principal,
    sessionId: string,
    given: { path: string; content?: string | undefined; contentBase64?: string | undefined; mode?: number | undefined }[],
    limitBytes: number,
  ): Promise<{ path: string; size: number }[]> {
    const session = await this.sessions.getOwned(principal, sessionId);
    const files = given.map((file, index) => {
      if ((file.content === undefined) === (file.contentBase64 === undefined))
        throw new AppError('BAD_REQUEST', `files[${index}]: give exactly one of content and content_base64`);
      const data = file.content !== undefined ? Buffer.from(file.content, 'utf8') : Buffer.from(file.contentBase64!, 'base64');
      return { path: file.path, data, mode: file.mode };
    });
    const total = files.reduce((sum, file) => sum + file.data.length, 0);
    if (total > limitBytes) throw new AppError('PAYLOAD_TOO_LARGE', `the files hold ${total} bytes, over the upload limit of ${limitBytes}`);
    const targets = files.map((file) => {
      const target = resolveGuestPath(file.path);
      if (target === '/') throw new AppError('BAD_REQUEST', 'the root directory cannot be written as a file');
      return target;
    });
    if (new Set(targets).size !== targets.length) throw new AppError('BAD_REQUEST', 'a path is given twice');
    const { vm, agent } = await this.vms.ensureVm(principal, session);
    const written: { path: string; size: number }[] = [];
    for (const [index, file] of files.entries()) {
      const target = targets[index]!;
      await agent.mkdir(path.dirname(target), { parents: true });
      const { size } = await agent.writeFile(target, Readable.from([file.data]), file.mode !== undefined ? { mode: file.mode } : {});
      written.push({ path: target, size });
      await recordEvent(this.database.db, this.clock, {
        type: 'file.uploaded',
        userId: principal.userId,
        subjectId: session.id,
        data: { session_id: session.id, vm_id: vm.id, path: target, size, recursive: false },
      });
    }
    this.notifier.committed();
    return written;
  }

  /** The entries of directory `dirPath` in the session's VM, sorted by name (symlinks not followed). */
  /**
   * The entries of directory `dirPath`, sorted by name; with `depth` > 1 also those of its subdirectories down to
   * that depth, each directory followed by its contents (as `find` lists them; symlinks are not followed), at most
   * `limit` entries (`truncated` says when more were left out).
   */
  async list(
    principal: Principal,
    sessionId: string,
    dirPath: string,
    options: { depth?: number; limit?: number } = {},
  ): Promise<{ path: string; entries: FileStat[]; truncated: boolean }> {
    const session = await this.sessions.getOwned(principal, sessionId);
    const target = resolveGuestPath(dirPath);
    const { agent } = await this.vms.ensureVm(principal, session);
    const depth = options.depth ?? 1;
    const limit = options.limit ?? Infinity;
    const entries: FileStat[] = [];
    const walk = async (directory: string, level: number, top: boolean): Promise<boolean> => {
      let children: FileStat[];
      try {
        children = await agent.listDir(directory);
      } catch (error) {
        // Gone (or replaced by a file) since its parent was listed: nothing to show; the top one is the caller's error.
        if (!top && error instanceof AppError && (error.code === 'NOT_FOUND' || error.code === 'CONFLICT')) return true;
        throw error;
      }
      for (const child of children) {
        if (entries.length >= limit) return false;
        entries.push(child);
        if (child.type === 'directory' && level < depth && !(await walk(child.path, level + 1, false))) return false;
      }
      return true;
    };
    const complete = await walk(target, 1, true);
    return { path: target, entries, truncated: !complete };
  }

  /** What is at `given` in the session's VM (symlinks not followed); NOT_FOUND when nothing is. */
  async stat(principal: Principal, sessionId: string, given: string): Promise<FileStat> {
    const { agent, target } = await this.reach(principal, sessionId, given);
    return agent.stat(target);
  }

  /** Whether anything (a file, a directory, a dangling symlink) is at `given` in the session's VM. */
  async exists(principal: Principal, sessionId: string, given: string): Promise<{ path: string; exists: boolean }> {
    const { agent, target } = await this.reach(principal, sessionId, given);
    return { path: target, exists: (await statOrNull(agent, target)) !== null };
  }

  /**
   * Makes directory `given` (with `parents`, its missing parents too, like `mkdir -p`). `created` is false when the
   * directory was already there; CONFLICT when a file is in the way.
   */
  async mkdir(principal: Principal, sessionId: string, given: string, parents: boolean, owner?: string): Promise<{ path: string; created: boolean }> {
    if (owner) checkAccountName(owner);
    const { agent, target } = await this.reach(principal, sessionId, given);
    const existing = await statOrNull(agent, target);
    if (existing?.type === 'directory') return { path: target, created: false };
    if (existing) throw new AppError('CONFLICT', `${target} exists and is not a directory`);
    // As another account (always with parents): made where that account may, and its own.
    if (owner && owner !== 'root') await makeDirectoriesAs(agent, target, owner);
    else await agent.mkdir(target, { parents });
    return { path: target, created: true };
  }

  /** The owning account and group of each of `paths` (absolute) in the session's VM; gone ones are left out. */
  async owners(principal: Principal, sessionId: string, paths: string[]): Promise<Map<string, PathOwner>> {
    const agent = await this.agentFor(principal, sessionId, () => paths.forEach((given) => resolveGuestPath(given)));
    return ownersOf(
      agent,
      paths.map((given) => resolveGuestPath(given)),
    );
  }

  /**
   * Removes what is at `given`: a file, a symlink (not what it points to) or an empty directory; with `recursive`, a
   * directory with everything in it. `removed` is false when nothing was there. The root directory is refused.
   */
  async remove(principal: Principal, sessionId: string, given: string, recursive: boolean): Promise<{ path: string; removed: boolean }> {
    let target = '';
    const agent = await this.agentFor(principal, sessionId, () => {
      target = resolveGuestPath(given);
      if (target === '/') throw new AppError('BAD_REQUEST', 'the root directory cannot be removed');
    });
    return { path: target, removed: await agent.remove(target, { recursive }) };
  }

  /**
   * Moves `from` to `to` in the session's VM (a rename within one filesystem, a copy and delete across them, as `mv`
   * does). Without `overwrite`, CONFLICT when something is at `to`; with it, a file at `to` is replaced (a directory
   * only by a directory, and only an empty one). Answers what is at `to` afterwards.
   */
  async rename(principal: Principal, sessionId: string, input: { from: string; to: string; overwrite: boolean }): Promise<FileStat> {
    let from = '';
    let to = '';
    const agent = await this.agentFor(principal, sessionId, () => {
      from = resolveGuestPath(input.from);
      to = resolveGuestPath(input.to);
      if (from === '/' || to === '/') throw new AppError('BAD_REQUEST', 'the root directory cannot be moved or replaced');
      if (from === to) throw new AppError('BAD_REQUEST', 'from and to name the same path');
      if (to.startsWith(`${from}/`)) throw new AppError('BAD_REQUEST', `${to} is inside ${from}: a directory cannot be moved into itself`);
    });
    await agent.stat(from); // NOT_FOUND before anything else
    if (!input.overwrite && (await statOrNull(agent, to))) throw new AppError('CONFLICT', `${to} exists (pass overwrite to replace it)`);
    // The agent has no rename of its own: `mv` run directly (no shell), both paths after `--`. -T treats `to` as the
    // destination itself, never as a directory to move into.
    let stderr = '';
    const result = await agent.exec(
      { argv: ['mv', '-T', ...(input.overwrite ? [] : ['-n']), '--', from, to], timeoutMs: RENAME_TIMEOUT_MS },
      { onStdout: () => undefined, onStderr: (chunk) => void (stderr = (stderr + chunk.toString('utf8')).slice(0, 4096)) },
    );
    if (result.exitCode !== 0) {
      const message =
        stderr.trim() || (result.timedOut ? `the move took over ${RENAME_TIMEOUT_MS / 1000} s` : `mv ended with ${result.exitCode ?? result.signal}`);
      throw new AppError(moveFailureCode(message), message);
    }
    return agent.stat(to);
  }

  /** The session (owned by `principal`), its VM's agent (started if it has none) and `given` resolved. */
  private async reach(principal: Principal, sessionId: string, given: string): Promise<{ agent: GuestAgent; target: string }> {
    let target = '';
    const agent = await this.agentFor(principal, sessionId, () => (target = resolveGuestPath(given)));
    return { agent, target };
  }

  /**
   * The agent of the session's VM (started if it has none), once `check` passed. The order is the API's: another
   * user's session is 404 whatever the request holds, and a request that cannot succeed starts no VM.
   */
  private async agentFor(principal: Principal, sessionId: string, check: () => void): Promise<GuestAgent> {
    const session = await this.sessions.getOwned(principal, sessionId);
    check();
    return (await this.vms.ensureVm(principal, session)).agent;
  }

  /**
   * Watches directory `given` (with `recursive`, the tree under it) in the session's VM (`file-watch.ts`); resolves
   * once the watch is in place. It lasts until `signal` aborts, the directory goes or the VM ends. NOT_FOUND when
   * nothing is there, CONFLICT when it is not a directory, QUOTA_EXCEEDED past the watches a session may hold.
   */
  async watch(
    principal: Principal,
    sessionId: string,
    given: string,
    options: { recursive: boolean; signal: AbortSignal },
  ): Promise<{ path: string; events: AsyncIterable<WatchEvent | WatchNotice> }> {
    const { agent, target } = await this.reach(principal, sessionId, given);
    const found = await agent.stat(target);
    if (found.type !== 'directory') throw new AppError('CONFLICT', `${target} is not a directory`);
    const held = this.watches.get(sessionId) ?? 0;
    if (held >= MAX_WATCHES_PER_SESSION)
      throw new AppError('QUOTA_EXCEEDED', `the session has ${held} watches open (at most ${MAX_WATCHES_PER_SESSION}): close one first`);
    this.watches.set(sessionId, held + 1);
    const release = () => {
      const left = (this.watches.get(sessionId) ?? 1) - 1;
      if (left > 0) this.watches.set(sessionId, left);
      else this.watches.delete(sessionId);
    };
    try {
      const events = await watchDirectory(agent, target, options);
      if (options.signal.aborted) release();
      else options.signal.addEventListener('abort', release, { once: true });
      return { path: target, events };
    } catch (error) {
      release();
      throw error;
    }
  }

  /** Opens `filename` in the session's VM for reading. */
  async download(principal: Principal, sessionId: string, filename: string): Promise<{ path: string; size: number; stream: Readable }> {
    const session = await this.sessions.getOwned(principal, sessionId);
    const target = resolveGuestPath(filename);
    const { agent } = await this.vms.ensureVm(principal, session);
    const file = await agent.readFile(target);
    return { path: target, size: file.size, stream: file.stream };
  }
}
