/**
 * `ssh host <command>` without a terminal: the command runs in the guest with `bash -lc` (as an execution's shell
 * command does), its stdout and stderr stream to the channel's two streams, the channel's input is its stdin,
 * and the real exit status (or signal) is sent back, so `ssh host 'exit 3'` exits 3.
 */
import { PassThrough } from 'node:stream';
import type { ServerChannel } from 'ssh2';
import type { LoginVm } from './login.ts';

/** The agent's longest deadline: the command lives as long as its channel (closing it ends the command). */
const COMMAND_TIMEOUT_MS = 24 * 3600 * 1000;

export async function runExecChannel(target: LoginVm, command: string, env: Record<string, string>, channel: ServerChannel): Promise<void> {
  const aborted = new AbortController();
  const stdin = new PassThrough();
  channel.pipe(stdin);
  channel.once('close', () => aborted.abort());
  try {
    const result = await target.agent.exec(
      { command, env: { ...(target.session?.env ?? {}), ...env }, timeoutMs: COMMAND_TIMEOUT_MS },
      {
        onStdout: (chunk) => channel.write(chunk),
        onStderr: (chunk) => channel.stderr.write(chunk),
      },
      aborted.signal,
      stdin,
    );
    if (result.exitCode !== null) channel.exit(result.exitCode);
    else channel.exit((result.signal ?? 'KILL').replace(/^SIG/, ''), false, '');
  } catch (error) {
    if (aborted.signal.aborted) return;
    channel.stderr.write(`sandboxd: ${(error as Error).message}\r\n`);
    channel.exit(255);
  }
  channel.end();
}
