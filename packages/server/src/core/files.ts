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

/** Where relative guest paths are resolved: the guest user's home. */
export const GUEST_HOME = '/root';

/** Resolves a user-given guest path: absolute as given, relative against the guest home; no NUL bytes. */
export function resolveGuestPath(given: string): string {
  if (given.includes('\0')) throw new AppError('BAD_REQUEST', 'the path contains a NUL byte');
  if (given.trim() === '') throw new AppError('BAD_REQUEST', 'the path is empty');
  return path.resolve(GUEST_HOME, given);
}

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

  /** Opens `filename` in the session's VM for reading. */
  async download(principal: Principal, sessionId: string, filename: string): Promise<{ path: string; size: number; stream: Readable }> {
    const session = await this.sessions.getOwned(principal, sessionId);
    const target = resolveGuestPath(filename);
    const { agent } = await this.vms.ensureVm(principal, session);
    const file = await agent.readFile(target);
    return { path: target, size: file.size, stream: file.stream };
  }
}
