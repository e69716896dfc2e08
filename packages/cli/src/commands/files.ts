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

/** A gzip'd tar of a directory's contents, made by the system's tar into a temporary file, and its removal. */
async function tarDirectory(dir: string): Promise<{ archive: Blob; remove: () => void }> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-upload-'));
  const remove = () => fs.rmSync(scratch, { recursive: true, force: true });
  const file = path.join(scratch, 'tree.tar.gz');
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn('tar', ['-czf', file, '-C', dir, '.'], { stdio: ['ignore', 'ignore', 'pipe'] });
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

export function registerFiles(program: Command, context: (options: GlobalOptions) => Context): void {
  program
    .command('upload')
    .description('copy a local file (or a directory, unpacked at REMOTE) into the VM')
    .argument('<local>', 'local file or directory')
    .argument('<remote>', 'path in the VM (absolute, or relative to /root; a trailing "/" keeps the file name)')
    .option('-s, --session <id>', 'session (default: the current one)')
    .action(async (local: string, remote: string, options: { session?: string }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const sessionId = ctx.requireSession(options.session);
      const stat = fs.statSync(local, { throwIfNoEntry: false });
      if (!stat) throw new UsageError(`no such file or directory: ${local}`);
      const spinner = ctx.out.spinner(`Uploading ${local}…`);
      // Both are sent as they are read from disk (a Blob of a file; a directory's archive in a temporary file): any
      // size in a few MiB of memory (the SDK streams large uploads itself, see its multipart.ts).
      const tree = stat.isDirectory() ? await tarDirectory(local) : null;
      try {
        const result = tree
          ? await ctx.client.files.upload(sessionId, tree.archive, remote, {
              recursive: true,
              filename: `${path.basename(path.resolve(local))}.tar.gz`,
            })
          : await ctx.client.files.upload(sessionId, await fs.openAsBlob(local), remote, { filename: path.basename(local) });
        spinner.stop();
        ctx.out.result(result, () => result.message);
      } finally {
        spinner.stop();
        tree?.remove();
      }
    });

  program
    .command('download')
    .description('copy a file out of the VM')
    .argument('<remote>', 'path in the VM')
    .argument('[local]', 'where to write it (default: its name, in this directory; "-" for stdout)')
    .option('-s, --session <id>', 'session (default: the current one)')
    .action(async (remote: string, local: string | undefined, options: { session?: string }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const sessionId = ctx.requireSession(options.session);
      if (local === '-' && ctx.out.json) throw new UsageError('--json and "-" (stdout) do not go together: the file would mix with the JSON');
      const target = local ?? (path.posix.basename(remote) || 'download');
      const file = local === '-' ? '-' : fs.existsSync(target) && fs.statSync(target).isDirectory() ? path.join(target, path.posix.basename(remote)) : target;
      const spinner = ctx.out.spinner(`Downloading ${remote}…`);
      let size = 0;
      // Streamed to its destination as it arrives (any size, bounded memory). A file is written beside its target
      // and renamed at the end: a download that fails leaves nothing half-written in its place.
      const partial = file === '-' ? null : path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.partial`);
      try {
        const body = Readable.fromWeb((await ctx.client.files.downloadStream(sessionId, remote)) as WebReadableStream<Uint8Array>);
        const counted = new Transform({
          transform(chunk: Buffer, _encoding, done) {
            size += chunk.length;
            spinner.update(`Downloading ${remote}… ${(size / 2 ** 20).toFixed(1)} MiB`);
            done(null, chunk);
          },
        });
        if (partial) await pipeline(body, counted, fs.createWriteStream(partial, { mode: 0o644 }));
        else await pipeline(body, counted, process.stdout, { end: false });
        if (partial) fs.renameSync(partial, file);
      } catch (error) {
        if (partial) fs.rmSync(partial, { force: true });
        throw error;
      } finally {
        spinner.stop();
      }
      if (file === '-') return;
      ctx.out.result({ remote_path: remote, local_path: path.resolve(file), size, session_id: sessionId }, () => `${size} bytes written to ${file}`);
    });
}
