/** sandbox keys ls | create | rm: your API keys; sandbox keys ssh add | ls | rm: your SSH public keys. */
import fs from 'node:fs';
import { Option, type Command } from 'commander';
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
      ctx.out.result(
        list,
        () =>
          table(
            ['ID', 'PREFIX', 'STATUS', 'CREATED', 'EXPIRES', 'LAST USED', 'DESCRIPTION'],
            list.map((k) => [
              String(k.id),
              `${k.key_prefix}…`,
              k.status ?? '-',
              k.created_at ?? '-',
              k.expires_at ?? 'never',
              k.last_used_at ?? '-',
              k.description ?? '',
            ]),
          ) || 'No API keys.',
      );
    });

  keys
    .command('create')
    .description('create an API key and print it (shown this once)')
    .option('-d, --description <text>', 'what the key is for')
    .option('--expires <date-time>', 'when it stops working (ISO 8601, e.g. 2030-01-01T00:00:00Z)')
    .addOption(new Option('--format <format>', "the key's shape: sandboxd (sbx_sk_…) or e2b (e2b_…, for E2B's tools)").choices(['sandboxd', 'e2b']))
    .action(async (options: { description?: string; expires?: string; format?: 'sandboxd' | 'e2b' }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      if (options.expires !== undefined && Number.isNaN(Date.parse(options.expires)))
        throw new UsageError(`--expires must be an ISO 8601 date-time, got "${options.expires}"`);
      const key = await ctx.client.apiKeys.create({
        ...(options.description !== undefined ? { description: options.description } : {}),
        ...(options.expires !== undefined ? { expiresAt: options.expires } : {}),
        ...(options.format !== undefined ? { format: options.format } : {}),
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

  registerSshKeys(keys, context);
}

/** sandbox keys ssh add <file> | ls | rm <id>: the public keys that log in through the SSH gateway (`sandbox ssh`). */
function registerSshKeys(keys: Command, context: (options: GlobalOptions) => Context): void {
  const ssh = keys.command('ssh').description('manage your SSH public keys (they log in with `sandbox ssh`)');

  ssh
    .command('add')
    .description('register an SSH public key (a .pub file; - reads standard input)')
    .argument('<file>', 'the public key file, e.g. ~/.ssh/id_ed25519.pub')
    .option('-n, --name <name>', "a label (default: the key's comment)")
    .action(async (file: string, options: { name?: string }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      if (!file.endsWith('.pub') && file !== '-' && fs.existsSync(`${file}.pub`)) {
        throw new UsageError(`${file} looks like a private key: give its public half, ${file}.pub`);
      }
      let text: string;
      try {
        text = fs.readFileSync(file === '-' ? 0 : file, 'utf8');
      } catch (error) {
        throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
      }
      const key = await ctx.client.sshKeys.create(text.trim(), options.name !== undefined ? { name: options.name } : {});
      ctx.out.result(key, () => `SSH key ${key.id} added: ${key.fingerprint} (${key.name})`);
    });

  ssh
    .command('ls')
    .description('list your SSH public keys')
    .action(async (_options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const list = await ctx.client.sshKeys.list();
      ctx.out.result(
        list,
        () =>
          table(
            ['ID', 'NAME', 'TYPE', 'FINGERPRINT', 'CREATED', 'LAST USED'],
            list.map((k) => [String(k.id), k.name, k.key_type, k.fingerprint, k.created_at, k.last_used_at ?? '-']),
          ) || 'No SSH keys. Add one with `sandbox keys ssh add ~/.ssh/id_ed25519.pub`.',
      );
    });

  ssh
    .command('rm')
    .description('delete an SSH public key (it stops logging in at once)')
    .argument('<id>', 'key id (from `sandbox keys ssh ls`)', integer('ID', 1, Number.MAX_SAFE_INTEGER))
    .action(async (id: number, _options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      await ctx.client.sshKeys.delete(id);
      ctx.out.result({ id, deleted: true }, () => `SSH key ${id} deleted`);
    });
}
