/**
 * The `sftp` subsystem (sftp, and scp, which speaks SFTP since OpenSSH 9) over the guest agent's file operations.
 * Files stream: a download reads the agent's file stream as the client asks for the next block, an upload feeds
 * the agent's streamed write as blocks arrive, so neither is held whole in memory. What the agent has no
 * operation for (rename, symlink, setting modes and times, truncation) runs coreutils in the guest with an
 * argument vector, never a shell line.
 *
 * Limits, by design of the streamed operations: a file is read front to back (a seek backwards re-opens it) and
 * written front to back from offset 0, replacing it (how sftp `put` and scp write); a write elsewhere is refused
 * as unsupported rather than corrupting the file.
 */
import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import ssh2, { type Attributes, type FileEntry, type InputAttributes, type SFTPWrapper } from 'ssh2';
import { AppError } from '../core/errors.ts';
import type { FileStat } from '@sandboxd/agent/protocol';
import type { GuestAgent } from '../core/vm-engine.ts';

const { OPEN_MODE, STATUS_CODE } = ssh2.utils.sftp;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
/** Coreutils run for an operation the agent lacks must not hang a client. */
const TOOL_TIMEOUT_MS = 60_000;

/** An open file being read front to back. */
class FileReader {
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  private ended = false;
  private failure: Error | null = null;
  private wake: (() => void) | null = null;
  position = 0;

  constructor(private readonly stream: Readable) {
    stream.on('data', (chunk: Buffer) => {
      this.buffered.push(chunk);
      this.bufferedBytes += chunk.length;
      // Hold the agent back while a few blocks wait for the client.
      if (this.bufferedBytes > 4 * 1024 * 1024) stream.pause();
      this.notify();
    });
    stream.once('end', () => ((this.ended = true), this.notify()));
    stream.once('error', (error) => ((this.failure = error), this.notify()));
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  /** The next `length` bytes (fewer only at the end), or null at the end. */
  async read(length: number): Promise<Buffer | null> {
    while (this.bufferedBytes < length && !this.ended) {
      if (this.failure) throw this.failure;
      this.stream.resume();
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    if (this.failure) throw this.failure;
    if (this.bufferedBytes === 0) return null;
    const all = Buffer.concat(this.buffered);
    const taken = all.subarray(0, Math.min(length, all.length));
    const rest = all.subarray(taken.length);
    this.buffered = rest.length > 0 ? [rest] : [];
    this.bufferedBytes = rest.length;
    this.position += taken.length;
    if (this.bufferedBytes <= 4 * 1024 * 1024) this.stream.resume();
    return taken;
  }

  close(): void {
    this.stream.destroy();
  }
}

/** An open file being written front to back. */
interface FileWriter {
  body: PassThrough;
  position: number;
  done: Promise<unknown>;
  failure: Error | null;
}

type Handle =
  | { kind: 'read'; path: string; reader: FileReader | null; queue: Promise<void> }
  | { kind: 'write'; path: string; writer: FileWriter; queue: Promise<void> }
  | { kind: 'dir'; path: string; entries: FileStat[] | null };

function statusOf(error: unknown): { code: number; message: string } {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof AppError) {
    if (error.code === 'NOT_FOUND') return { code: STATUS_CODE.NO_SUCH_FILE, message };
    if (error.code === 'FORBIDDEN') return { code: STATUS_CODE.PERMISSION_DENIED, message };
  }
  return { code: STATUS_CODE.FAILURE, message };
}

function attributesOf(stat: FileStat): Attributes {
  const type = stat.type === 'directory' ? S_IFDIR : stat.type === 'symlink' ? S_IFLNK : S_IFREG;
  const seconds = Math.floor(stat.mtimeMs / 1000);
  return { mode: type | (stat.mode & 0o7777), uid: 0, gid: 0, size: stat.size, atime: seconds, mtime: seconds };
}

/** An `ls -l` line, which `sftp`'s `ls -l` shows as it is. */
function longName(stat: FileStat): string {
  const kind = stat.type === 'directory' ? 'd' : stat.type === 'symlink' ? 'l' : '-';
  const bits = 'rwxrwxrwx'
    .split('')
    .map((letter, index) => (stat.mode & (1 << (8 - index)) ? letter : '-'))
    .join('');
  const date = new Date(stat.mtimeMs).toISOString().slice(0, 16).replace('T', ' ');
  return `${kind}${bits} 1 0 0 ${String(stat.size).padStart(10)} ${date} ${stat.name}`;
}

/** Serves one `sftp` subsystem channel for the agent of one VM. */
export class SftpSession {
  private readonly handles = new Map<number, Handle>();
  private nextHandle = 1;
  private home: Promise<string> | null = null;

  constructor(
    private readonly sftp: SFTPWrapper,
    private readonly agent: GuestAgent,
  ) {
    sftp.on('REALPATH', (id: number, given: string) => this.answer(id, async () => this.sendName(id, await this.absolute(given))));
    sftp.on('STAT', (id: number, given: string) =>
      this.answer(id, async () => sftp.attrs(id, attributesOf(await this.statFollowing(await this.absolute(given))))),
    );
    sftp.on('LSTAT', (id: number, given: string) => this.answer(id, async () => sftp.attrs(id, attributesOf(await agent.stat(await this.absolute(given))))));
    sftp.on('FSTAT', (id: number, handle: Buffer) =>
      this.answer(id, async () => sftp.attrs(id, attributesOf(await this.statFollowing(this.handleOf(handle).path)))),
    );
    sftp.on('OPEN', (id: number, given: string, flags: number, attrs: InputAttributes) => this.answer(id, () => this.open(id, given, flags, attrs)));
    sftp.on('READ', (id: number, handle: Buffer, offset: number, length: number) => this.answer(id, () => this.read(id, handle, offset, length)));
    sftp.on('WRITE', (id: number, handle: Buffer, offset: number, data: Buffer) => this.answer(id, () => this.write(id, handle, offset, data)));
    sftp.on('CLOSE', (id: number, handle: Buffer) => this.answer(id, () => this.close(id, handle)));
    sftp.on('OPENDIR', (id: number, given: string) => this.answer(id, () => this.openDir(id, given)));
    sftp.on('READDIR', (id: number, handle: Buffer) => this.answer(id, () => this.readDir(id, handle)));
    sftp.on('MKDIR', (id: number, given: string, attrs: InputAttributes) =>
      this.answer(id, async () => {
        await agent.mkdir(await this.absolute(given), { parents: false, ...(typeof attrs.mode === 'number' ? { mode: attrs.mode & 0o7777 } : {}) });
        sftp.status(id, STATUS_CODE.OK);
      }),
    );
    sftp.on('RMDIR', (id: number, given: string) => this.answer(id, () => this.removePath(id, given, 'directory')));
    sftp.on('REMOVE', (id: number, given: string) => this.answer(id, () => this.removePath(id, given, 'file')));
    sftp.on('RENAME', (id: number, from: string, to: string) =>
      this.answer(id, async () => this.tool(id, ['mv', '-T', '--', await this.absolute(from), await this.absolute(to)])),
    );
    sftp.on('READLINK', (id: number, given: string) =>
      this.answer(id, async () => {
        const stat = await agent.stat(await this.absolute(given));
        if (stat.type !== 'symlink' || stat.symlinkTarget === undefined) return sftp.status(id, STATUS_CODE.FAILURE, `${stat.path} is not a symbolic link`);
        this.sendName(id, stat.symlinkTarget);
      }),
    );
    // OpenSSH's client sends (link target, link path), the reverse of the draft's order.
    sftp.on('SYMLINK', (id: number, target: string, link: string) =>
      this.answer(id, async () => this.tool(id, ['ln', '-s', '--', target, await this.absolute(link)])),
    );
    sftp.on('SETSTAT', (id: number, given: string, attrs: InputAttributes) =>
      this.answer(id, async () => this.setAttributes(id, await this.absolute(given), attrs)),
    );
    sftp.on('FSETSTAT', (id: number, handle: Buffer, attrs: InputAttributes) =>
      this.answer(id, async () => {
        const open = this.handleOf(handle);
        // Times and modes of a file still being written are set when it is closed (the write would undo them).
        if (open.kind === 'write') return sftp.status(id, STATUS_CODE.OK);
        await this.setAttributes(id, open.path, attrs);
      }),
    );
    // The client's EOF ends the subsystem, as sftp-server exiting does under sshd: without it the client waits.
    // scp counts a session without an exit status as failed; ssh2's SFTP server has no public way to send one.
    sftp.once('end', () => {
      const channel = sftp as unknown as { _protocol?: { exitStatus(id: number, status: number): void }; outgoing?: { id: number; state: string } };
      if (channel._protocol && channel.outgoing?.state === 'open') channel._protocol.exitStatus(channel.outgoing.id, 0);
      sftp.end();
    });
    sftp.once('close', () => {
      for (const handle of this.handles.values()) this.discard(handle);
      this.handles.clear();
    });
  }

  /** Runs a request; a failure becomes its status reply. */
  private answer(id: number, work: () => Promise<void> | void): void {
    void (async () => {
      try {
        await work();
      } catch (error) {
        const status = statusOf(error);
        this.sftp.status(id, status.code, status.message);
      }
    })();
  }

  private sendName(id: number, name: string): void {
    const entry: FileEntry = { filename: name, longname: name, attrs: {} as Attributes };
    this.sftp.name(id, [entry]);
  }

  /** The login directory: the agent's HOME, where a command runs by default. */
  private homeDirectory(): Promise<string> {
    this.home ??= (async () => {
      let out = '';
      const result = await this.agent.exec(
        { argv: ['pwd'], timeoutMs: TOOL_TIMEOUT_MS },
        { onStdout: (chunk) => (out += chunk.toString()), onStderr: () => undefined },
      );
      const home = out.trim();
      return result.exitCode === 0 && home.startsWith('/') ? home : '/';
    })();
    return this.home;
  }

  /** A client path made absolute and normal (relative paths are from the login directory, as with sshd). */
  private async absolute(given: string): Promise<string> {
    const expanded = given === '~' ? '' : given.startsWith('~/') ? given.slice(2) : given;
    return path.posix.resolve(await this.homeDirectory(), expanded || '.');
  }

  /** `stat` following a symbolic link (the agent's stat reports links themselves). */
  private async statFollowing(target: string): Promise<FileStat> {
    const stat = await this.agent.stat(target);
    if (stat.type !== 'symlink' || stat.symlinkTarget === undefined) return stat;
    return this.agent.stat(path.posix.resolve(path.posix.dirname(target), stat.symlinkTarget));
  }

  private handleOf(raw: Buffer): Handle {
    const handle = raw.length === 4 ? this.handles.get(raw.readUInt32BE(0)) : undefined;
    if (!handle) throw new AppError('BAD_REQUEST', 'unknown handle');
    return handle;
  }

  private addHandle(id: number, handle: Handle): void {
    const number = this.nextHandle++;
    this.handles.set(number, handle);
    const raw = Buffer.alloc(4);
    raw.writeUInt32BE(number);
    this.sftp.handle(id, raw);
  }

  private async open(id: number, given: string, flags: number, attrs: InputAttributes): Promise<void> {
    const target = await this.absolute(given);
    if (!(flags & OPEN_MODE.WRITE)) {
      // Opening checks the file exists and is a file; its stream starts at the first read.
      const stat = await this.statFollowing(target);
      if (stat.type === 'directory') return this.sftp.status(id, STATUS_CODE.FAILURE, `${target} is a directory`);
      return this.addHandle(id, { kind: 'read', path: target, reader: null, queue: Promise.resolve() });
    }
    if (flags & OPEN_MODE.APPEND) return this.sftp.status(id, STATUS_CODE.OP_UNSUPPORTED, 'appending is not supported: write the whole file');
    if (!(flags & OPEN_MODE.TRUNC)) {
      const existing = await this.agent.stat(target).catch(() => null);
      if (existing && existing.size > 0)
        return this.sftp.status(
          id,
          STATUS_CODE.OP_UNSUPPORTED,
          'writing into an existing file is not supported: the whole file is replaced (open with truncation)',
        );
    }
    if (flags & OPEN_MODE.EXCL && (await this.agent.stat(target).catch(() => null))) return this.sftp.status(id, STATUS_CODE.FAILURE, `${target} exists`);
    const body = new PassThrough({ highWaterMark: 1024 * 1024 });
    const mode = typeof attrs.mode === 'number' ? attrs.mode & 0o7777 : undefined;
    const writer: FileWriter = { body, position: 0, failure: null, done: Promise.resolve() };
    writer.done = this.agent.writeFile(target, body, mode !== undefined ? { mode } : {}).catch((error: Error) => {
      writer.failure = error;
      body.destroy();
    });
    this.addHandle(id, { kind: 'write', path: target, writer, queue: Promise.resolve() });
  }

  private read(id: number, raw: Buffer, offset: number, length: number): Promise<void> {
    const handle = this.handleOf(raw);
    if (handle.kind !== 'read') throw new AppError('BAD_REQUEST', 'not a handle open for reading');
    // One read at a time per file, in the order the client asked (it asks for increasing offsets).
    const work = handle.queue.then(async () => {
      if (!handle.reader || handle.reader.position !== offset) {
        handle.reader?.close();
        const file = await this.agent.readFile(handle.path);
        handle.reader = new FileReader(file.stream);
        while (handle.reader.position < offset) {
          const skipped = await handle.reader.read(Math.min(offset - handle.reader.position, 1024 * 1024));
          if (!skipped) break;
        }
      }
      const data = handle.reader.position === offset ? await handle.reader.read(length) : null;
      if (data) this.sftp.data(id, data);
      else this.sftp.status(id, STATUS_CODE.EOF);
    });
    handle.queue = work.catch(() => undefined);
    return work;
  }

  private write(id: number, raw: Buffer, offset: number, data: Buffer): Promise<void> {
    const handle = this.handleOf(raw);
    if (handle.kind !== 'write') throw new AppError('BAD_REQUEST', 'not a handle open for writing');
    const work = handle.queue.then(async () => {
      const { writer } = handle;
      if (writer.failure) throw writer.failure;
      if (offset !== writer.position) {
        return this.sftp.status(id, STATUS_CODE.OP_UNSUPPORTED, `writes must be in order from the start (expected offset ${writer.position}, got ${offset})`);
      }
      writer.position += data.length;
      // Acknowledge once the agent's stream takes it: the client's window of outstanding writes is the backpressure.
      if (!writer.body.write(data)) {
        await new Promise<void>((resolve) => {
          const done = () => (writer.body.off('drain', done), writer.body.off('close', done), resolve());
          writer.body.on('drain', done).on('close', done);
        });
      }
      if (writer.failure) throw writer.failure;
      this.sftp.status(id, STATUS_CODE.OK);
    });
    handle.queue = work.catch(() => undefined);
    return work;
  }

  private async close(id: number, raw: Buffer): Promise<void> {
    const handle = this.handleOf(raw);
    this.handles.delete(raw.readUInt32BE(0));
    if (handle.kind === 'write') {
      await handle.queue;
      handle.writer.body.end();
      await handle.writer.done;
      if (handle.writer.failure) throw handle.writer.failure;
    } else if (handle.kind === 'read') {
      await handle.queue;
      handle.reader?.close();
    }
    this.sftp.status(id, STATUS_CODE.OK);
  }

  private discard(handle: Handle): void {
    if (handle.kind === 'read') handle.reader?.close();
    // An upload the client abandoned must not leave a truncated file that looks complete: fail the stream.
    if (handle.kind === 'write') handle.writer.body.destroy(new Error('the SFTP session closed before the file was'));
  }

  private async openDir(id: number, given: string): Promise<void> {
    const target = await this.absolute(given);
    const stat = await this.statFollowing(target);
    if (stat.type !== 'directory') return this.sftp.status(id, STATUS_CODE.FAILURE, `${target} is not a directory`);
    this.addHandle(id, { kind: 'dir', path: target, entries: null });
  }

  /** All entries in the first answer (with `.` and `..`, as sshd lists them), then end of directory. */
  private async readDir(id: number, raw: Buffer): Promise<void> {
    const handle = this.handleOf(raw);
    if (handle.kind !== 'dir') throw new AppError('BAD_REQUEST', 'not a directory handle');
    if (handle.entries !== null) return this.sftp.status(id, STATUS_CODE.EOF);
    handle.entries = await this.agent.listDir(handle.path);
    const self = await this.agent.stat(handle.path);
    const dots: FileEntry[] = ['.', '..'].map((name) => ({ filename: name, longname: longName({ ...self, name }), attrs: attributesOf(self) }));
    this.sftp.name(id, [...dots, ...handle.entries.map((entry) => ({ filename: entry.name, longname: longName(entry), attrs: attributesOf(entry) }))]);
  }

  private async removePath(id: number, given: string, expected: 'file' | 'directory'): Promise<void> {
    const target = await this.absolute(given);
    const stat = await this.agent.stat(target);
    if ((stat.type === 'directory') !== (expected === 'directory')) {
      return this.sftp.status(id, STATUS_CODE.FAILURE, expected === 'directory' ? `${target} is not a directory` : `${target} is a directory`);
    }
    await this.agent.remove(target, { recursive: false });
    this.sftp.status(id, STATUS_CODE.OK);
  }

  private async setAttributes(id: number, target: string, attrs: InputAttributes): Promise<void> {
    const steps: string[][] = [];
    if (typeof attrs.size === 'number') steps.push(['truncate', '-s', String(attrs.size), '--', target]);
    if (attrs.mode !== undefined) {
      const mode = typeof attrs.mode === 'number' ? attrs.mode & 0o7777 : Number.parseInt(attrs.mode, 8) & 0o7777;
      steps.push(['chmod', mode.toString(8), '--', target]);
    }
    const seconds = (value: number | Date) => (value instanceof Date ? Math.floor(value.getTime() / 1000) : value);
    if (attrs.mtime !== undefined) steps.push(['touch', '-h', '-m', '-d', `@${seconds(attrs.mtime)}`, '--', target]);
    if (attrs.atime !== undefined) steps.push(['touch', '-h', '-a', '-d', `@${seconds(attrs.atime)}`, '--', target]);
    for (const argv of steps) {
      const failure = await this.runTool(argv);
      if (failure !== null) return this.sftp.status(id, STATUS_CODE.FAILURE, failure);
    }
    this.sftp.status(id, STATUS_CODE.OK);
  }

  private async tool(id: number, argv: string[]): Promise<void> {
    const failure = await this.runTool(argv);
    if (failure === null) this.sftp.status(id, STATUS_CODE.OK);
    else this.sftp.status(id, STATUS_CODE.FAILURE, failure);
  }

  /** Runs a coreutils program in the guest; null when it succeeded, else what it said. */
  private async runTool(argv: string[]): Promise<string | null> {
    let stderr = '';
    const result = await this.agent.exec(
      { argv, timeoutMs: TOOL_TIMEOUT_MS },
      { onStdout: () => undefined, onStderr: (chunk) => (stderr += chunk.toString()) },
    );
    return result.exitCode === 0 ? null : stderr.trim() || `${argv[0]} failed`;
  }
}
