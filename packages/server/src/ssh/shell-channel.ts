/**
 * An interactive shell (`ssh host`, or `ssh -t host <command>`): a terminal in the guest's agent, wired to the
 * channel, resized on `window-change`. Unlike a terminal of the API (which outlives its WebSocket), it is the
 * SSH session's own: closing the channel ends it.
 */
import type { ServerChannel } from 'ssh2';
import type { PtyAttachment } from '../core/vm-engine.ts';
import type { LoginVm } from './login.ts';

/** What the client asked for with `pty-req`. */
export interface TerminalRequest {
  cols: number;
  rows: number;
  term: string;
}

/** The live terminal of a channel: `resize` follows the client's window. */
export interface ShellHandle {
  resize(cols: number, rows: number): void;
}

export async function runShellChannel(
  target: LoginVm,
  terminal: TerminalRequest,
  command: string | null,
  env: Record<string, string>,
  channel: ServerChannel,
): Promise<ShellHandle> {
  const shell = '/bin/bash';
  const pty = await target.agent.createPty({
    cols: terminal.cols,
    rows: terminal.rows,
    argv: command === null ? [shell, '-l'] : [shell, '-lc', command],
    env: { ...(target.session?.env ?? {}), ...env, TERM: terminal.term || 'xterm-256color' },
  });
  let attachment: PtyAttachment | null = null;
  let exited = false;
  const end = () => {
    if (!exited) void target.agent.killPty(pty.id).catch(() => undefined);
  };
  channel.once('close', () => {
    attachment?.detach();
    end();
  });
  attachment = await target.agent.attachPty(pty.id, {
    onOutput: (chunk) => channel.write(chunk),
    onExit: (exit) => {
      exited = true;
      if (exit.exitCode !== null) channel.exit(exit.exitCode);
      else channel.exit((exit.signal ?? 'KILL').replace(/^SIG/, ''), false, '');
      channel.end();
      // The agent keeps an exited terminal for its record; this one was the channel's alone.
      void target.agent.killPty(pty.id).catch(() => undefined);
    },
  });
  const input = attachment;
  channel.on('data', (data: Buffer) => input.write(data));
  return { resize: (cols, rows) => input.resize(cols, rows) };
}
