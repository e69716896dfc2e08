/** sandbox login: device authorization with PKCE; the key is stored, never printed. */
import os from 'node:os';
import { createPkcePair } from '@sandboxd/sdk';
import type { Command } from 'commander';
import type { Context, GlobalOptions } from '../context.ts';
import { saveLogin } from '../credentials.ts';
import { tryOpenBrowser } from '../open-browser.ts';

export function registerLogin(program: Command, context: (options: GlobalOptions) => Context): void {
  program
    .command('login')
    .description('log in through the browser and store a new API key for this machine')
    .option('--no-browser', 'only print the URL to open')
    .option('--hostname <name>', 'name of this machine in the key description', os.hostname())
    .action(async (options: { browser: boolean; hostname: string }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const pkce = await createPkcePair();
      const started = await ctx.client.cliAuth.start({ hostname: options.hostname, codeChallenge: pkce.codeChallenge });
      ctx.out.info(`To log in to ${ctx.baseUrl}, open this page and confirm the code ${started.user_code}:\n\n  ${started.verification_uri_complete}\n`);
      // A browser only for a person at a terminal; scripts and tests get the URL alone.
      if (options.browser && process.stderr.isTTY && tryOpenBrowser(started.verification_uri_complete)) ctx.out.info('(opened in your browser)');
      const spinner = ctx.out.spinner('Waiting for approval in the browser…');
      let login;
      try {
        login = await ctx.client.cliAuth.waitForKey({
          deviceCode: started.device_code,
          codeVerifier: pkce.codeVerifier,
          interval: started.interval,
          expiresIn: started.expires_in,
        });
      } finally {
        spinner.stop();
      }
      const file = saveLogin(ctx.baseUrl, {
        api_key: login.api_key,
        api_key_id: login.api_key_id,
        key_prefix: login.key_prefix,
        user_id: login.user_id,
        username: login.username,
        description: login.description,
        created_at: login.created_at,
      });
      ctx.out.result(
        {
          logged_in: true,
          base_url: ctx.baseUrl,
          username: login.username,
          user_id: login.user_id,
          api_key_id: login.api_key_id,
          key_prefix: login.key_prefix,
          description: login.description,
          credentials_file: file,
        },
        () => `Logged in to ${ctx.baseUrl} as ${login.username}. The key ${login.key_prefix}… ("${login.description}") is stored in ${file}.`,
      );
    });
}
