/** sandbox upload / download: files (and directories, as tar archives) into and out of a session's VM. */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Command } from 'commander';
import type { Context, GlobalOptions } from '../context.ts';
import { UsageError } from '../errors.ts';
import { interruptible } from '../interrupt.ts';
import { byteProgress, countedBlob } from '../progress.ts';

/** A gzip'd tar of a directory's contents, made by the system's tar into a temporary file, and its removal. */
async function tarDirectory(dir: string, signal: AbortSignal): Promise<{ archive: Blob; remove: () => void }> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-upload-'));
  const remove = () => fs.rmSync(scratch, { recursive: true, force: true });
  const file = path.join(scratch, 'tree.tar.gz');
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn('tar', ['-czf', file, '-C', dir, '.'], { stdio: ['ignore', 'ignore', 'pipe'], signal });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('error', (error) => reject(new UsageError(`uploading a directory needs tar: ${error.message}`)));
      child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`tar failed (${code}): ${stderr.trim()}`))));
    });
    return { archive: await fs.openAsBlob(file), remove };
  } catch (error) {
    remove();
    throw error;
  }
}

/** The size of a file in the VM, or undefined when it cannot be told (the download itself then says why). */
async function sizeOf(ctx: Context, sessionId: string, remote: string): Promise<number | undefined> {
  try {
    const entry = await ctx.client.files.stat(sessionId, remote);
    return entry.type === 'file' ? entry.size : undefined;
  } catch {
    return undefined;
  }
}

export function registerFiles(program: Command, context: (options: GlobalOptions) => Context): void {
  program
    .command('upload')
    .description('copy a local file (or a directory, unpacked at REMOTE) into the VM, with a progress bar on a terminal')
    .argument('<local>', 'local file or directory')
    .argument('<remote>', 'path in the VM (absolute, or relative to /root; a trailing "/" keeps the file name)')
    .option('-s, --session <id>', 'session (default: the current one)')
    .action(async (local: string, remote: string, options: { session?: string }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const sessionId = ctx.requireSession(options.session);
      const stat = fs.statSync(local, { throwIfNoEntry: false });
      if (!stat) throw new UsageError(`no such file or directory: ${local}`);
      const name = path.basename(path.resolve(local));
      // Both are sent as they are read from disk (a Blob of a file; a directory's archive in a temporary file): any
      // size in a few MiB of memory (the SDK streams large uploads itself, see its multipart.ts).
      const spinner = stat.isDirectory() ? ctx.out.spinner(`Packing ${local}…`) : null;
      // Ctrl-C ends tar, and its temporary directory is removed.
      const tree = stat.isDirectory()
        ? await interruptible(`packing ${local} stopped; nothing was uploaded`, (signal) => tarDirectory(local, signal)).finally(() => spinner?.stop())
        : null;
      const blob = tree ? tree.archive : await fs.openAsBlob(local);
      const progress = ctx.out.bytes(tree ? `${name}/ (tar.gz)` : name, blob.size);
      try {
        const result = await interruptible(`the upload of ${local} stopped`, (signal) =>
          ctx.client.files.upload(
            sessionId,
            // Counted as the SDK reads it to send it (a small upload goes whole in one FormData, uncounted: its bar
            // jumps to the end).
            ctx.out.progress === 'off' ? blob : countedBlob(blob, (bytes) => progress.set(bytes)),
            remote,
            tree ? { recursive: true, filename: `${name}.tar.gz`, signal } : { filename: path.basename(local), signal },
          ),
        );
        progress.finish(blob.size);
        ctx.out.result(result, () => result.message);
      } finally {
        progress.stop();
        tree?.remove();
      }
    });

  program
    .command('download')
    .description('copy a file out of the VM, with a progress bar on a terminal')
    .argument('<remote>', 'path in the VM')
    .argument('[local]', 'where to write it (default: its name, in this directory; "-" for stdout)')
    .option('-s, --session <id>', 'session (default: the current one)')
    .action(async (remote: string, local: string | undefined, options: { session?: string }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const sessionId = ctx.requireSession(options.session);
      if (local === '-' && ctx.out.json) throw new UsageError('--json and "-" (stdout) do not go together: the file would mix with the JSON');
      const target = local ?? (path.posix.basename(remote) || 'download');
      const file = local === '-' ? '-' : fs.existsSync(target) && fs.statSync(target).isDirectory() ? path.join(target, path.posix.basename(remote)) : target;
      // No bar redrawn over a file printed on the same terminal.
      const showProgress = ctx.out.progress !== 'off' && !(file === '-' && process.stdout.isTTY && ctx.out.progress === 'redraw');
      // The size, for the bar's percentage and ETA, only when a bar is shown (a request more).
      const totalBytes = showProgress ? await sizeOf(ctx, sessionId, remote) : undefined;
      const progress = showProgress ? ctx.out.bytes(path.posix.basename(remote) || remote, totalBytes) : byteProgress(remote, undefined, { mode: 'off' });
      let size = 0;
      // Streamed to its destination as it arrives (any size, bounded memory). A file is written beside its target
      // and renamed at the end: a download that fails or is interrupted leaves nothing half-written in its place.
      const partial = file === '-' ? null : path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.partial`);
      try {
        await interruptible(`the download of ${remote} stopped${partial ? '; nothing was written' : ''}`, async (signal) => {
          const body = Readable.fromWeb((await ctx.client.files.downloadStream(sessionId, remote, { signal })) as WebReadableStream<Uint8Array>);
          const counted = new Transform({
            transform(chunk: Buffer, _encoding, done) {
              size += chunk.length;
              progress.set(size);
              done(null, chunk);
            },
          });
          if (partial) await pipeline(body, counted, fs.createWriteStream(partial, { mode: 0o644 }), { signal });
          else await pipeline(body, counted, process.stdout, { end: false, signal });
        });
        if (partial) fs.renameSync(partial, file);
        progress.finish();
      } catch (error) {
        if (partial) fs.rmSync(partial, { force: true });
        throw error;
      } finally {
        progress.stop();
      }
      if (file === '-') return;
      ctx.out.result({ remote_path: remote, local_path: path.resolve(file), size, session_id: sessionId }, () => `${size} bytes written to ${file}`);
    });
}
