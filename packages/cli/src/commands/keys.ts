/** sandbox keys ls | create | rm: your API keys. */
import type { Command } from 'commander';
import type { Context, GlobalOptions } from '../context.ts';
import { UsageError } from '../errors.ts';
import { table } from '../output.ts';
import { integer } from '../parse.ts';

export function registerKeys(program: Command, context: (options: GlobalOptions) => Context): void {
  const keys = program.command('keys').description('manage your API keys');

  keys
    .command('ls')
    .description('list your API keys')
    .action(async (_options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const list = await ctx.client.apiKeys.list();
      ctx.out.result(list, () =>
        table(
          ['ID', 'PREFIX', 'STATUS', 'CREATED', 'EXPIRES', 'LAST USED', 'DESCRIPTION'],
          list.map((k) => [String(k.id), `${k.key_prefix}…`, k.status ?? '-', k.created_at ?? '-', k.expires_at ?? 'never', k.last_used_at ?? '-', k.description ?? '']),
        ) || 'No API keys.',
      );
    });

  keys
    .command('create')
    .description('create an API key and print it (shown this once)')
    .option('-d, --description <text>', 'what the key is for')
    .option('--expires <date-time>', 'when it stops working (ISO 8601, e.g. 2030-01-01T00:00:00Z)')
    .action(async (options: { description?: string; expires?: string }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      if (options.expires !== undefined && Number.isNaN(Date.parse(options.expires))) throw new UsageError(`--expires must be an ISO 8601 date-time, got "${options.expires}"`);
      const key = await ctx.client.apiKeys.create({
        ...(options.description !== undefined ? { description: options.description } : {}),
        ...(options.expires !== undefined ? { expiresAt: options.expires } : {}),
      });
      ctx.out.result(key, () => key.full_key);
      if (!ctx.out.json) ctx.out.info(`Key ${key.id} created. Store it now: it cannot be shown again.`);
    });

  keys
    .command('rm')
    .description('delete an API key (it stops working at once)')
    .argument('<id>', 'key id (from `sandbox keys ls`)', integer('ID', 1, Number.MAX_SAFE_INTEGER))
    .action(async (id: number, _options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const result = await ctx.client.apiKeys.delete(id);
      ctx.out.result(result, () => result.message);
      if (ctx.login?.api_key_id === id) ctx.out.info('That was the key of your login here: run `sandbox login` again.');
    });
}
