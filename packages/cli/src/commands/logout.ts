/** sandbox logout: deletes the stored key on the server, then forgets it. */
import { AuthenticationError, NotFoundError, Sandboxd } from '@sandboxd/sdk';
import type { Command } from 'commander';
import type { Context, GlobalOptions } from '../context.ts';
import { loadLogin, removeLogin } from '../credentials.ts';

export function registerLogout(program: Command, context: (options: GlobalOptions) => Context): void {
  program
    .command('logout')
    .description('delete the stored API key of this server and forget it')
    .option('--keep-key', 'only forget the key locally; it keeps working on the server')
    .action(async (options: { keepKey?: boolean }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const stored = loadLogin(ctx.baseUrl);
      if (!stored) {
        ctx.out.result({ logged_out: false, base_url: ctx.baseUrl, key_deleted: false }, () => `Not logged in to ${ctx.baseUrl}.`);
        return;
      }
      let keyDeleted = false;
      if (!options.keepKey) {
        try {
          // With the stored key itself: it may delete itself.
          await new Sandboxd({ baseUrl: ctx.baseUrl, apiKey: stored.api_key, maxRetries: 1 }).apiKeys.delete(stored.api_key_id);
          keyDeleted = true;
        } catch (error) {
          // Already deleted or expired: nothing left to revoke.
          if (!(error instanceof AuthenticationError || error instanceof NotFoundError)) throw error;
        }
      }
      removeLogin(ctx.baseUrl);
      ctx.out.result(
        { logged_out: true, base_url: ctx.baseUrl, key_deleted: keyDeleted, key_prefix: stored.key_prefix },
        () => `Logged out of ${ctx.baseUrl}${keyDeleted ? `; the key ${stored.key_prefix}… is deleted` : ''}.`,
      );
    });
}
