/**
 * sandbox ps (alias: processes) ls | start | logs | signal | kill: background processes in a session's VM, and
 * `sandbox exec --stream`, which runs one and prints its output as it arrives. Ctrl-C during a streamed run sends
 * SIGINT to the process in the VM (as a terminal would); a second Ctrl-C kills it. The exit code is the process's
 * (128 + the signal's number when a signal ended it, 124 when its timeout did, as timeout(1)).
 */
import os from 'node:os';
import { PROCESS_SIGNALS, type ProcessInfo, type ProcessSignal } from '@sandboxd/sdk';
import type { Command } from 'commander';
import type { Context, GlobalOptions } from '../context.ts';
import { UsageError } from '../errors.ts';
import { keyValues, table } from '../output.ts';
import { integer } from '../parse.ts';

/** The shell's exit code for how a process ended. */
export function exitCodeOfProcess(process: ProcessInfo): number {
  if (process.timed_out) return 124;
  if (process.exit_code !== null) return process.exit_code;
  const number = process.signal ? os.constants.signals[process.signal as NodeJS.Signals] : undefined;
  return number ? 128 + number : 1;
}

/** Runs `code` (bash) as a process of the session (a new session when there is none) and prints its output as it arrives. */
export async function streamCommand(ctx: Context, code: string, given: string | undefined): Promise<void> {
  let sessionId = ctx.sessionOr(given);
  if (!sessionId) {
    sessionId = (await ctx.client.sessions.create()).id;
    ctx.remember(sessionId);
    if (!ctx.out.json) ctx.out.info(`(new session ${sessionId}; later commands use it)`);
  }
  const session = sessionId;
  let processId: string | null = null;
  let interrupts = 0;
  const onInterrupt = () => {
    interrupts += 1;
    if (!processId) return;
    if (interrupts === 1) {
      process.stderr.write('\n(interrupting the process in the VM; Ctrl-C again kills it)\n');
      void ctx.client.processes.signal(session, processId, 'SIGINT').catch(() => undefined);
    } else void ctx.client.processes.kill(session, processId).catch(() => undefined);
  };
  process.on('SIGINT', onInterrupt);
  try {
    const result = await ctx.client.processes.run(session, code, {
      onStart: (started) => (processId = started.process_id),
      onStdout: (text) => !ctx.out.json && process.stdout.write(text),
      onStderr: (text) => !ctx.out.json && process.stderr.write(text),
    });
    if (ctx.out.json) ctx.out.result({ ...result.process, stdout: result.stdout, stderr: result.stderr }, () => '');
    process.exitCode = exitCodeOfProcess(result.process);
  } finally {
    process.off('SIGINT', onInterrupt);
  }
}

function describeProcess(p: ProcessInfo): string {
  return keyValues([
    ['process', p.process_id],
    ['status', p.status],
    ['command', p.command ?? JSON.stringify(p.argv)],
    ['pid', p.pid],
    ['cwd', p.cwd],
    ['user', p.user],
    ['tag', p.tag],
    ['exit code', p.exit_code],
    ['signal', p.signal],
    ['timed out', p.timed_out],
    ['error', p.error],
    ['started', p.started_at],
    ['ended', p.ended_at],
  ]);
}

function signalOption(raw: string): ProcessSignal {
  const name = (raw.toUpperCase().startsWith('SIG') ? raw.toUpperCase() : `SIG${raw.toUpperCase()}`) as ProcessSignal;
  if (!PROCESS_SIGNALS.includes(name)) throw new UsageError(`the signal must be one of ${PROCESS_SIGNALS.join(', ')}, got "${raw}"`);
  return name;
}

export function registerProcesses(program: Command, context: (options: GlobalOptions) => Context): void {
  const ps = program
    .command('ps')
    .alias('processes')
    .description('background processes in the VM: list, start, follow output, signal, kill (`exec --stream` runs one in the foreground)');

  ps.command('ls', { isDefault: true })
    .description("list the session's processes (running, and those ended in the last 10 minutes)")
    .option('-s, --session <id>', 'session (default: the current one)')
    .action(async (options: { session?: string }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const list = await ctx.client.processes.list(ctx.requireSession(options.session));
      ctx.out.result(
        list,
        () =>
          table(
            ['PROCESS', 'STATUS', 'EXIT', 'PID', 'TAG', 'COMMAND'],
            list.map((p) => [
              p.process_id,
              p.status,
              p.exit_code === null ? (p.signal ?? '') : String(p.exit_code),
              String(p.pid ?? ''),
              p.tag ?? '',
              p.command ?? (p.argv ?? []).join(' '),
            ]),
          ) || 'No processes.',
      );
    });

  ps.command('start')
    .description('start a bash command in the background; prints its process id')
    .argument('<command...>', 'the command (several words are joined with spaces)')
    .option('-s, --session <id>', 'session (default: the current one)')
    .option('--cwd <dir>', "working directory in the VM (default: the user's home, /root for root)")
    .option('--user <name>', 'the account of the VM that runs it: root (default) or user (uid 1000, /home/user)')
    .option('--tag <tag>', 'a label shown in lists')
    .option('--timeout <seconds>', 'kill it after this long', integer('--timeout', 1, 86_400))
    .action(async (words: string[], options: { session?: string; cwd?: string; user?: string; tag?: string; timeout?: number }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const started = await ctx.client.processes.start(ctx.requireSession(options.session), words.join(' '), {
        ...(options.cwd ? { cwd: options.cwd } : {}),
        ...(options.user ? { user: options.user } : {}),
        ...(options.tag ? { tag: options.tag } : {}),
        ...(options.timeout ? { timeoutMs: options.timeout * 1000 } : {}),
      });
      ctx.out.result(started, () => started.process_id);
    });

  ps.command('logs')
    .description("print a process's output (kept: its newest 4 MiB); -f follows it until it ends")
    .argument('<process>', 'process id')
    .option('-s, --session <id>', 'session (default: the current one)')
    .option('-f, --follow', 'keep printing live output until the process ends')
    .option('--after <n>', 'only output events after this one', integer('--after', 0, Number.MAX_SAFE_INTEGER), 0)
    .action(async (processId: string, options: { session?: string; follow?: boolean; after: number }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const session = ctx.requireSession(options.session);
      const controller = new AbortController();
      const stop = () => controller.abort();
      process.once('SIGINT', stop);
      try {
        for await (const event of ctx.client.processes.output(session, processId, {
          after: options.after,
          follow: options.follow === true,
          signal: controller.signal,
        })) {
          if (ctx.out.json) process.stdout.write(`${JSON.stringify(event)}\n`);
          else if (event.type === 'stdout') process.stdout.write(event.data ?? '');
          else if (event.type === 'stderr') process.stderr.write(event.data ?? '');
          else if (event.type === 'dropped') process.stderr.write(`(${event.events} older output events are no longer kept)\n`);
          else if (event.type === 'exit' && event.process) process.exitCode = exitCodeOfProcess(event.process);
        }
      } catch (error) {
        if (!controller.signal.aborted) throw error;
      } finally {
        process.off('SIGINT', stop);
      }
    });

  ps.command('signal')
    .description('send a signal to a process (its whole process group)')
    .argument('<process>', 'process id')
    .argument('<signal>', `one of ${PROCESS_SIGNALS.join(', ')} (the SIG may be left out)`, signalOption)
    .option('-s, --session <id>', 'session (default: the current one)')
    .action(async (processId: string, signal: ProcessSignal, options: { session?: string }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const info = await ctx.client.processes.signal(ctx.requireSession(options.session), processId, signal);
      ctx.out.result(info, () => `Sent ${signal} to ${processId}.`);
    });

  ps.command('kill')
    .description('kill a process (SIGKILL to its group); the VM and its other runs go on')
    .argument('<process>', 'process id')
    .option('-s, --session <id>', 'session (default: the current one)')
    .action(async (processId: string, options: { session?: string }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const info = await ctx.client.processes.kill(ctx.requireSession(options.session), processId);
      ctx.out.result(info, () => describeProcess(info));
    });
}
