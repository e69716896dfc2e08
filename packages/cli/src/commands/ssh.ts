/**
 * sandbox ssh <session_or_vm_id> [--print] [-- command…]: logs in to a session's or a VM's through the server's SSH
 * gateway with the real `ssh` program (so scp/sftp, `-L` and your ssh config work as usual). The host and port
 * come from the server (GET /v1/ssh/info); the key is whichever of yours ssh offers (register it with
 * `sandbox keys ssh add`). `--print` prints the command instead of running it. With --json, ssh's output goes to
 * stderr and stdout gets the command and its exit code as JSON.
 */
import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import type { Context, GlobalOptions } from '../context.ts';
import { UsageError } from '../errors.ts';

/** Quotes a word for a POSIX shell when it needs it (for the printed command only; running uses argv). */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

export function registerSsh(program: Command, context: (options: GlobalOptions) => Context): void {
  program
    .command('ssh')
    .description("log in to a session's VM (or a VM) with ssh through the server's SSH gateway")
    .argument('<id>', 'a session id or a VM id (vm-…)')
    .argument('[command...]', 'a command to run instead of a shell (after --)')
    .option('--print', 'print the ssh command instead of running it')
    .option('-i, --identity <file>', 'the private key to log in with (passed to ssh -i)')
    .action(async (id: string, commandWords: string[], options: { print?: boolean; identity?: string }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const info = await ctx.client.sshKeys.info();
      if (!info.enabled || info.host === null || info.port === null) throw new UsageError('this server runs without its SSH gateway (SANDBOXD_SSH_LISTEN=off)');
      const argv = ['-p', String(info.port), ...(options.identity ? ['-i', options.identity] : []), `${id}@${info.host}`, ...commandWords];
      if (options.print) {
        ctx.out.result({ argv: ['ssh', ...argv], host_key_fingerprint: info.host_key_fingerprint }, () => ['ssh', ...argv].map(shellWord).join(' '));
        return;
      }
      if (!ctx.out.json) ctx.out.info(`The gateway's host key is ${info.host_key_fingerprint}: compare it with what ssh shows the first time.`);
      // With --json stdout carries only the result: what ssh prints goes to stderr.
      const child = spawn('ssh', argv, { stdio: ['inherit', ctx.out.json ? 2 : 'inherit', 'inherit'] });
      const code = await new Promise<number>((resolve, reject) => {
        child.once('error', (error) => reject(new UsageError(`cannot run ssh: ${error.message} (install OpenSSH's client)`)));
        child.once('close', (status, signal) => resolve(status ?? (signal ? 128 : 1)));
      });
      process.exitCode = code;
      if (ctx.out.json) ctx.out.result({ argv: ['ssh', ...argv], host_key_fingerprint: info.host_key_fingerprint, exit_code: code }, () => '');
    });
}
