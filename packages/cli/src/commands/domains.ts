/** sandbox domains ls | add | verify | rm: custom domains that serve a share, a port of a session or an app at your own domain. */
import type { CustomDomain } from '@sandboxd/sdk';
import type { Command } from 'commander';
import type { Context, GlobalOptions } from '../context.ts';
import { EXIT, UsageError } from '../errors.ts';
import { table } from '../output.ts';
import { integer } from '../parse.ts';

const targetOf = (d: CustomDomain) => (d.app_id ? `app ${d.app_id}` : d.share_id ? `share ${d.share_id}` : `${d.session_id}:${d.port}`);

/** The TXT record to create, as a zone-file line. */
const recordLine = (d: CustomDomain) => `${d.verification.name}. TXT "${d.verification.value}"`;

export function registerDomains(program: Command, context: (options: GlobalOptions) => Context): void {
  const domains = program.command('domains').description('serve a share, a port or an app at your own domain (verified by a DNS TXT record)');

  domains
    .command('ls')
    .description('list your custom domains')
    .action(async (_options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const list = await ctx.client.customDomains.list();
      ctx.out.result(
        list,
        () =>
          table(
            ['ID', 'DOMAIN', 'STATUS', 'SERVES', 'VERIFIED', 'LAST ERROR'],
            list.map((d) => [d.id, d.domain, d.status, targetOf(d), d.verified_at ?? '-', d.last_error ?? '']),
          ) || 'No custom domains.',
      );
    });

  domains
    .command('add')
    .description('claim a domain for a share (--share), a port of a session (--port) or a deployed app (--app); prints the TXT record to create')
    .argument('<domain>', 'the domain, e.g. app.example.com (point it at the server or its reverse proxy)')
    .option('--share <id>', 'serve this share (with its access rules)')
    .option('-p, --port <port>', 'serve this port of the session instead (only to you, like `sandbox url`)', integer('--port', 1, 65535))
    .option('-s, --session <id>', 'with --port: the session (default: the current one)')
    .option('--app <app>', 'serve this deployed app (name or id), like its own URL')
    .action(async (domain: string, options: { share?: string; port?: number; session?: string; app?: string }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const given = (['share', 'port', 'app'] as const).filter((name) => options[name] !== undefined);
      if (given.length > 1) throw new UsageError(`give one of --share, --port or --app, not ${given.map((name) => `--${name}`).join(' and ')}`);
      if (given.length === 0) throw new UsageError('give --share ID, or --port PORT (with --session ID or the current session), or --app APP');
      const created =
        options.app !== undefined
          ? await ctx.client.customDomains.create({ domain, appId: options.app })
          : options.share !== undefined
            ? await ctx.client.customDomains.create({ domain, shareId: options.share })
            : await ctx.client.customDomains.create({ domain, sessionId: ctx.requireSession(options.session), port: options.port! });
      ctx.out.result(created, () =>
        [
          `Claimed ${created.domain} (${created.id}), pending until its DNS record is seen. Create this TXT record at your DNS host:`,
          '',
          `  ${recordLine(created)}`,
          '',
          `then run \`sandbox domains verify ${created.id}\` (the server also checks by itself until ${created.expires_at}).`,
        ].join('\n'),
      );
    });

  domains
    .command('verify')
    .description('check the TXT record of a domain now (exit 0 once verified, 1 while still pending)')
    .argument('<id>', 'domain id (from `sandbox domains ls`)')
    .action(async (id: string, _options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const checked = await ctx.client.customDomains.verify(id);
      ctx.out.result(checked, () =>
        checked.status === 'verified'
          ? `${checked.domain} is verified: it serves ${targetOf(checked)} at ${checked.link ?? checked.url}`
          : `${checked.domain} is not verified yet: ${checked.last_error ?? 'no check yet'}\nThe record to create: ${recordLine(checked)}`,
      );
      if (checked.status !== 'verified') process.exitCode = EXIT.error;
    });

  domains
    .command('rm')
    .description('delete a custom domain (a verified one stops being served at once)')
    .argument('<id>', 'domain id (from `sandbox domains ls`)')
    .action(async (id: string, _options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const deleted = await ctx.client.customDomains.delete(id);
      ctx.out.result(deleted, () => `Deleted ${deleted.domain} (${deleted.id}).`);
    });
}
