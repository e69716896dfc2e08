/**
 * sandbox files ls | stat | mkdir | rm | mv | watch: look at, change and watch the files of a session's VM in place
 * (`upload` and `download` copy files in and out). Paths are absolute, or relative to /root.
 */
import path from 'node:path';
import type { FileEntry } from '@sandboxd/sdk';
import type { Command } from 'commander';
import type { Context, GlobalOptions } from '../context.ts';
import { keyValues, table } from '../output.ts';
import { integer } from '../parse.ts';

const SESSION_FLAGS = '-s, --session <id>';
const SESSION_HELP = 'session (default: the current one)';

/** Permission bits as `ls -l` users read them in octal, e.g. 0755. */
const octalMode = (mode: number) => `0${(mode & 0o7777).toString(8).padStart(3, '0')}`;

/** A name as `ls -l` shows it: a symlink with its target. */
const displayName = (entry: FileEntry) => (entry.symlink_target === null ? entry.name : `${entry.name} -> ${entry.symlink_target}`);

function describeEntry(entry: FileEntry): string {
  return keyValues([
    ['path', entry.path],
    ['type', entry.type],
    ['size', `${entry.size} bytes`],
    ['mode', octalMode(entry.mode)],
    ['modified', entry.modified_at],
    ...(entry.symlink_target === null ? [] : ([['target', entry.symlink_target]] as [string, unknown][])),
  ]);
}

export function registerFileVerbs(program: Command, context: (options: GlobalOptions) => Context): void {
  const files = program
    .command('files')
    .description('list, describe, make, remove, move and watch files in the VM (`upload`/`download` copy files in and out)');

  files
    .command('ls')
    .description('list a directory of the VM, sorted by name (symlinks are not followed)')
    .argument('[path]', 'directory in the VM (absolute, or relative to /root)', '/root')
    .option(SESSION_FLAGS, SESSION_HELP)
    .option('-d, --depth <levels>', 'list subdirectories too, down to this many levels (paths then relative to the directory)', integer('--depth', 1, 16), 1)
    .action(async (remote: string, options: { session?: string; depth: number }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const listing = await ctx.client.files.list(ctx.requireSession(options.session), remote, { depth: options.depth });
      // Deeper listings name each entry by its path under the directory listed.
      const nameOf = (entry: FileEntry) =>
        options.depth > 1 ? displayName({ ...entry, name: path.posix.relative(listing.path, entry.path) }) : displayName(entry);
      ctx.out.result(
        listing,
        () =>
          (table(
            ['TYPE', 'SIZE', 'MODE', 'NAME'],
            listing.entries.map((entry) => [entry.type, String(entry.size), octalMode(entry.mode), nameOf(entry)]),
          ) || `${listing.path} is empty.`) + (listing.truncated ? '\n(more entries were left out)' : ''),
      );
    });

  files
    .command('stat')
    .description('describe a path in the VM: type, size, mode, modification time (exit 4 when nothing is there)')
    .argument('<path>', 'path in the VM')
    .option(SESSION_FLAGS, SESSION_HELP)
    .action(async (remote: string, options: { session?: string }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const entry = await ctx.client.files.stat(ctx.requireSession(options.session), remote);
      ctx.out.result(entry, () => describeEntry(entry));
    });

  files
    .command('mkdir')
    .description('make a directory in the VM, with its missing parents (like mkdir -p); fine when it is already there')
    .argument('<path>', 'directory in the VM')
    .option('--no-parents', 'fail (exit 4) when the parent directory is missing, instead of making it')
    .option(SESSION_FLAGS, SESSION_HELP)
    .action(async (remote: string, options: { parents: boolean; session?: string }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const sessionId = ctx.requireSession(options.session);
      const created = await ctx.client.files.mkdir(sessionId, remote, { parents: options.parents });
      ctx.out.result({ path: remote, created, session_id: sessionId }, () => (created ? `Made directory ${remote}.` : `${remote} was already a directory.`));
    });

  files
    .command('rm')
    .description('remove a file, a symlink or an empty directory in the VM (-r: a directory and everything in it)')
    .argument('<path>', 'path in the VM')
    .option('-r, --recursive', 'remove a directory with its contents')
    .option(SESSION_FLAGS, SESSION_HELP)
    .action(async (remote: string, options: { recursive?: boolean; session?: string }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const sessionId = ctx.requireSession(options.session);
      // Removing what is not there succeeds (as `rm -f` does): the path is gone either way.
      const removed = await ctx.client.files.remove(sessionId, remote, { recursive: Boolean(options.recursive) });
      ctx.out.result({ path: remote, removed, session_id: sessionId }, () => (removed ? `Removed ${remote}.` : `Nothing was at ${remote}.`));
    });

  files
    .command('mv')
    .description('move or rename a file or directory in the VM; TO is the new path itself, not a directory to move into')
    .argument('<from>', 'what to move')
    .argument('<to>', 'its new path')
    .option('-f, --force', 'replace what is at TO (a file; a directory only by a directory, and only an empty one)')
    .option(SESSION_FLAGS, SESSION_HELP)
    .action(async (from: string, to: string, options: { force?: boolean; session?: string }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const entry = await ctx.client.files.rename(ctx.requireSession(options.session), from, to, { overwrite: Boolean(options.force) });
      ctx.out.result(entry, () => `Moved ${from} to ${entry.path}.`);
    });

  files
    .command('watch')
    .description('print changes under a directory of the VM as they happen, until Ctrl-C (--json: one JSON event per line)')
    .argument('[path]', 'directory in the VM', '/root')
    .option('-r, --recursive', 'watch the whole tree under the directory')
    .option(SESSION_FLAGS, SESSION_HELP)
    .action(async (remote: string, options: { recursive?: boolean; session?: string }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const sessionId = ctx.requireSession(options.session);
      // Ctrl-C ends the watch (the watcher in the VM stops with it) and exits 0: that is how a watch is meant to end.
      const stop = new AbortController();
      const onInterrupt = () => stop.abort();
      process.on('SIGINT', onInterrupt);
      try {
        for await (const event of ctx.client.files.watch(sessionId, remote, { recursive: Boolean(options.recursive), signal: stop.signal })) {
          if (ctx.out.json) process.stdout.write(`${JSON.stringify(event)}\n`);
          else if (event.type === 'start') ctx.out.info(`Watching ${event.path}${event.recursive ? ' and everything under it' : ''} (Ctrl-C to stop).`);
          else if (event.type === 'end') ctx.out.info(`The watch ended: ${event.message ?? 'the directory went'}.`);
          else if (event.type === 'overflow') ctx.out.info('(the VM dropped events: too many changes at once)');
          else if (event.type === 'error') ctx.out.info(`(${event.message ?? 'a watch could not be added'})`);
          else process.stdout.write(`${event.type.padEnd(6)} ${event.path}${event.is_dir ? '/' : ''}\n`);
        }
      } catch (error) {
        if (!stop.signal.aborted) throw error;
      } finally {
        process.off('SIGINT', onInterrupt);
      }
    });
}
