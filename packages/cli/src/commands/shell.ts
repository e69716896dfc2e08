/**
 * sandbox shell: an interactive terminal in a session's VM, like `ssh`. The local terminal goes into raw mode
 * (every key, Ctrl-C included, goes to the remote program), its size follows SIGWINCH, and the command exits
 * with the remote program's exit code. Piped (non-TTY) input is sent as typed, then Ctrl-D, so
 * `echo 'make test' | sandbox shell` runs and ends. With --json the terminal's output goes to stderr and stdout gets
 * one JSON record of how it ended.
 */
import { constants } from 'node:os';
import type { TerminalConnection, TerminalExit, WebSocketConstructor } from '@sandboxd/sdk';
import type { Command } from 'commander';
import { WebSocket } from 'ws';
import type { Context, GlobalOptions } from '../context.ts';

interface ShellOptions {
  command?: string;
  attach?: string;
  keep?: boolean;
}

/** End of transmission: what Ctrl-D sends; a shell reading an empty line takes it as the end of input. */
const EOT = '\x04';

/** The local terminal's size, or the classic 80x24 when output is not a terminal. */
function localSize(): { cols: number; rows: number } {
  const { columns, rows } = process.stdout;
  return process.stdout.isTTY && columns && rows ? { cols: Math.min(columns, 1000), rows: Math.min(rows, 1000) } : { cols: 80, rows: 24 };
}

/** The exit code for how the remote program ended: its own, or 128 + the signal number, as a shell reports it. */
function exitCodeOf(exit: TerminalExit | null): number {
  if (!exit) return 1;
  if (exit.exitCode !== null) return exit.exitCode;
  const number = exit.signal ? constants.signals[exit.signal as NodeJS.Signals] : undefined;
  return number ? 128 + number : 1;
}

/** Connects local stdin/stdout to the terminal until it exits or the connection drops; answers how it ended. */
async function relay(connection: TerminalConnection): Promise<TerminalExit | null> {
  const stdin = process.stdin;
  const interactive = stdin.isTTY === true;
  const onInput = (chunk: Buffer) => connection.write(chunk);
  const onEnd = () => connection.write(EOT);
  const onResize = () => {
    const { cols, rows } = localSize();
    connection.resize(cols, rows);
  };
  if (interactive) stdin.setRawMode(true);
  stdin.on('data', onInput);
  if (!interactive) stdin.once('end', onEnd);
  process.stdout.on('resize', onResize);
  stdin.resume();
  try {
    await connection.closed;
    return await connection.exit;
  } finally {
    process.stdout.off('resize', onResize);
    stdin.off('data', onInput);
    stdin.off('end', onEnd);
    if (interactive) stdin.setRawMode(false);
    stdin.pause();
  }
}

export function registerShell(program: Command, context: (options: GlobalOptions) => Context): void {
  program
    .command('shell')
    .description("open an interactive terminal in a session's VM (starting the VM if needed)")
    .argument('[session]', 'session id (default: the current one)')
    .option('-c, --command <command>', 'run this command line on the terminal instead of a login shell')
    .option('-a, --attach <pty_id>', 'attach to a terminal that already runs (it keeps running when you leave)')
    .option('--keep', 'keep the terminal (and its scrollback) after it ends, for `sandbox shell --attach`')
    .action(async (given: string | undefined, options: ShellOptions, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const owner = { sessionId: ctx.requireSession(given) };
      let ptyId = options.attach;
      if (!ptyId) {
        const spinner = ctx.out.spinner('Opening a terminal…');
        try {
          ptyId = (await ctx.client.terminals.create(owner, { ...localSize(), ...(options.command !== undefined ? { command: options.command } : {}) })).pty_id;
        } finally {
          spinner.stop();
        }
      }
      const connection = await ctx.client.terminals.attach(owner, ptyId, {
        // Node 20 has no global WebSocket; ws implements the same browser API.
        WebSocket: WebSocket as unknown as WebSocketConstructor,
        // With --json stdout carries only the result: the terminal's output goes to stderr.
        onData: (data) => (ctx.out.json ? process.stderr : process.stdout).write(data),
      });
      if (options.attach) connection.resize(localSize().cols, localSize().rows);
      const exit = await relay(connection);
      // A terminal this command started is removed once it ended, unless asked to keep it.
      if (exit && !options.attach && !options.keep) await ctx.client.terminals.delete(owner, ptyId).catch(() => undefined);
      if (!exit) process.stderr.write(`\r\nsandbox: the connection to terminal ${ptyId} closed; it keeps running: sandbox shell --attach ${ptyId}\n`);
      process.exitCode = exitCodeOf(exit);
      if (ctx.out.json) {
        const kept = !exit || Boolean(options.attach) || Boolean(options.keep);
        ctx.out.result(
          { session_id: owner.sessionId, pty_id: ptyId, ended: exit !== null, exit_code: exit?.exitCode ?? null, signal: exit?.signal ?? null, kept },
          () => '',
        );
      }
    });
}
