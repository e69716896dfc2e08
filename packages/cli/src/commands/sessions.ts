/** sandbox ls / status / kill / url: the sessions and sandboxes of the caller. */
import type { Command } from 'commander';
import type { Context, GlobalOptions } from '../context.ts';
import { keyValues, table } from '../output.ts';
import { integer, keyValue } from '../parse.ts';

export function registerSessionCommands(program: Command, context: (options: GlobalOptions) => Context): void {
  program
    .command('ls')
    .description('list your sandboxes (one per VM), newest first')
    .option('-m, --metadata <key=value>', 'only sandboxes whose session has this metadata; repeatable', keyValue('--metadata'))
    .option('--limit <n>', 'at most this many (1 to 1000, default 100)', integer('--limit', 1, 1000))
    .action(async (options: { metadata?: Record<string, string>; limit?: number }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const sandboxes = await ctx.client.sandboxes.list({
        ...(options.metadata ? { metadata: options.metadata } : {}),
        ...(options.limit ? { limit: options.limit } : {}),
      });
      ctx.out.result(sandboxes, () =>
        sandboxes.length === 0
          ? 'No sandboxes.'
          : table(
              ['SANDBOX', 'SESSION', 'STATUS', 'VCPU', 'MEMORY', 'STARTED', 'METADATA'],
              sandboxes.map((s) => [
                s.sandbox_id,
                s.session_id ?? '-',
                s.status,
                String(s.vcpu_count),
                `${s.memory_mb} MiB`,
                s.started_at,
                Object.entries(s.metadata)
                  .map(([k, v]) => `${k}=${v}`)
                  .join(',') || '-',
              ]),
            ),
      );
    });

  program
    .command('status')
    .description('status of a session and its VM')
    .argument('[session]', 'session id (default: the current one)')
    .action(async (given: string | undefined, _options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const status = await ctx.client.sessions.status(ctx.requireSession(given));
      ctx.out.result(status, () =>
        keyValues([
          ['session', status.session_id],
          ['vm', status.vm_id],
          ['status', status.vm_status ?? 'no VM yet'],
          ['alive', status.vm_alive],
          ['uptime', status.uptime_seconds === null ? null : `${status.uptime_seconds} s`],
          ['expires in', status.expires_in_seconds === null ? null : `${status.expires_in_seconds} s`],
          ['created', status.created_at],
        ]),
      );
    });

  program
    .command('kill')
    .description("kill a session's VM (the next exec starts a new one)")
    .argument('[session]', 'session id (default: the current one)')
    .action(async (given: string | undefined, _options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const result = await ctx.client.sessions.kill(ctx.requireSession(given));
      ctx.out.result(result, () => result.message);
    });

  program
    .command('url')
    .description('address of a port inside the VM through the preview proxy (only you may open it until you share it)')
    .argument('<port>', 'port the service listens on in the VM', integer('PORT', 1, 65535))
    .option('-s, --session <id>', 'session (default: the current one)')
    .option('-d, --direct', 'print the host-name address (direct_url), for apps that must live at /')
    .action(async (port: number, options: { session?: string; direct?: boolean }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const app = await ctx.client.sessions.appUrl(ctx.requireSession(options.session), port);
      ctx.out.result(app, () => String(options.direct ? app.direct_url : app.url));
    });
}
