/** sandbox whoami: which server, which user, which key (checked against the server). */
import type { Command } from 'commander';
import type { Context, GlobalOptions } from '../context.ts';
import { keyValues } from '../output.ts';

export function registerWhoami(program: Command, context: (options: GlobalOptions) => Context): void {
  program
    .command('whoami')
    .description('show the server, user and API key in use')
    .action(async (_options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      // Listing keys proves the key works (without one: 401, "run sandbox login") and tells whose it is.
      const keys = await ctx.client.apiKeys.list();
      const userId = ctx.login?.user_id ?? keys[0]?.user_id ?? null;
      const info = {
        base_url: ctx.baseUrl,
        username: ctx.login?.username ?? null,
        user_id: userId,
        key_prefix: ctx.login?.key_prefix ?? null,
        key_source: ctx.keySource,
        api_keys: keys.length,
      };
      ctx.out.result(info, () =>
        keyValues([
          ['server', info.base_url],
          ['user', info.username ?? `user ${info.user_id}`],
          ['key', info.key_prefix ? `${info.key_prefix}… (${ctx.login?.description})` : `from ${info.key_source}`],
          ['keys', info.api_keys],
        ]),
      );
    });
}
