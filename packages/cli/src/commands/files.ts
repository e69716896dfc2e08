/** sandbox upload / download: files (and directories, as tar archives) into and out of a session's VM. */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { Context, GlobalOptions } from '../context.ts';
import { UsageError } from '../errors.ts';

/** A gzip'd tar of a directory's contents, made by the system's tar. */
async function tarDirectory(dir: string): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const child = spawn('tar', ['-czf', '-', '-C', dir, '.'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', (error) => reject(new UsageError(`uploading a directory needs tar: ${error.message}`)));
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(chunks)) : reject(new Error(`tar failed (${code}): ${stderr.trim()}`))));
  });
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
      try {
        const result = stat.isDirectory()
          ? await ctx.client.files.upload(sessionId, await tarDirectory(local), remote, {
              recursive: true,
              filename: `${path.basename(path.resolve(local))}.tar.gz`,
            })
          : await ctx.client.files.upload(sessionId, await fs.openAsBlob(local), remote, { filename: path.basename(local) });
        spinner.stop();
        ctx.out.result(result, () => result.message);
      } finally {
        spinner.stop();
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
      const spinner = ctx.out.spinner(`Downloading ${remote}…`);
      let bytes: Uint8Array;
      try {
        bytes = await ctx.client.files.download(sessionId, remote);
      } finally {
        spinner.stop();
      }
      if (local === '-') {
        if (ctx.out.json) throw new UsageError('--json and "-" (stdout) do not go together: the file would mix with the JSON');
        process.stdout.write(bytes);
        return;
      }
      const target = local ?? (path.posix.basename(remote) || 'download');
      const file = fs.existsSync(target) && fs.statSync(target).isDirectory() ? path.join(target, path.posix.basename(remote)) : target;
      fs.writeFileSync(file, bytes);
      ctx.out.result(
        { remote_path: remote, local_path: path.resolve(file), size: bytes.length, session_id: sessionId },
        () => `${bytes.length} bytes written to ${file}`,
      );
    });
}
