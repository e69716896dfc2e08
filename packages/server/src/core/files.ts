/**
 * Files in and out of a session's VM, streamed end to end (request → agent, agent → response): nothing
 * is buffered whole on the host except a download answered as base64 JSON, which has its own limit.
 */
import path from 'node:path/posix';
import type { Readable } from 'node:stream';
import type { Principal } from './authenticator.ts';
import type { Clock } from './clock.ts';
import { AppError } from './errors.ts';
import { recordEvent, type EventNotifier } from './events.ts';
import type { SessionService } from './sessions.ts';
import type { VmService } from './vms/index.ts';
import type { Database } from '../store/database.ts';
import type { FileStat } from '@sandboxd/agent/protocol';
import type { GuestAgent } from './vm-engine.ts';

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

export class FileService {
  constructor(
    private readonly database: Database,
    private readonly sessions: SessionService,
    private readonly vms: VmService,
    private readonly clock: Clock,
    private readonly notifier: EventNotifier,
  ) {}

  /** Writes `body` to `remotePath` in the session's VM, or unpacks it there as a tar archive when `recursive`. */
  async upload(
    principal: Principal,
    sessionId: string,
    input: { remotePath: string; filename: string | null; recursive: boolean; body: Readable },
  ): Promise<{ path: string; size: number | null; recursive: boolean; vmId: string }> {
    const session = await this.sessions.getOwned(principal, sessionId);
    let target = resolveGuestPath(input.remotePath);
    // A path ending in "/" names a directory: the file keeps its own name inside it.
    if (!input.recursive && input.remotePath.endsWith('/') && input.filename) target = path.join(target, path.basename(input.filename));
    const { vm, agent } = await this.vms.ensureVm(principal, session);
    let size: number | null = null;
    if (input.recursive) {
      await agent.extractTar(target, input.body, { gzip: input.filename ? /\.(tgz|tar\.gz)$/i.test(input.filename) : false });
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

  /** The entries of directory `dirPath` in the session's VM, sorted by name (symlinks not followed). */
  async list(principal: Principal, sessionId: string, dirPath: string): Promise<{ path: string; entries: FileStat[] }> {
    const session = await this.sessions.getOwned(principal, sessionId);
    const target = resolveGuestPath(dirPath);
    const { agent } = await this.vms.ensureVm(principal, session);
    return { path: target, entries: await agent.listDir(target) };
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
  async mkdir(principal: Principal, sessionId: string, given: string, parents: boolean): Promise<{ path: string; created: boolean }> {
    const { agent, target } = await this.reach(principal, sessionId, given);
    const existing = await statOrNull(agent, target);
    if (existing?.type === 'directory') return { path: target, created: false };
    if (existing) throw new AppError('CONFLICT', `${target} exists and is not a directory`);
    await agent.mkdir(target, { parents });
    return { path: target, created: true };
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

  /** Opens `filename` in the session's VM for reading. */
  async download(principal: Principal, sessionId: string, filename: string): Promise<{ path: string; size: number; stream: Readable }> {
    const session = await this.sessions.getOwned(principal, sessionId);
    const target = resolveGuestPath(filename);
    const { agent } = await this.vms.ensureVm(principal, session);
    const file = await agent.readFile(target);
    return { path: target, size: file.size, stream: file.stream };
  }
}
