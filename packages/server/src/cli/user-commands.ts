/** `sandboxd user create|passwd|plan` and `sandboxd key create`: accounts and API keys, straight in the store. */
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { AppError } from '../core/errors.ts';
import { print, readStdin, wantsJson, withServices } from './context.ts';

interface PasswordOptions {
  password?: string;
  passwordStdin?: boolean;
}

/** The password given (option or stdin), else a generated one (printed once). */
async function passwordOf(options: PasswordOptions): Promise<{ password: string; generated: boolean }> {
  if (options.passwordStdin) return { password: await readStdin(), generated: false };
  if (options.password) return { password: options.password, generated: false };
  return { password: randomBytes(18).toString('base64url'), generated: true };
}

const PASSWORD_HELP = 'without --password or --password-stdin a password is generated and printed once';

export function registerUserCommands(program: Command): void {
  const user = program.command('user').description('create users, set their password or plan (in the store: no server needed)');

  user
    .command('create')
    .description('create a user')
    .argument('<username>', 'the new user’s name')
    .option('--password <password>', 'the password (visible in the process list: prefer --password-stdin)')
    .option('--password-stdin', 'read the password from stdin')
    .option('--plan <plan>', 'the user’s plan (default: SANDBOXD_DEFAULT_PLAN)')
    .option('--admin', 'make the user an administrator')
    .addHelpText('after', `\n${PASSWORD_HELP}.`)
    .action(async (username: string, options: PasswordOptions & { plan?: string; admin?: boolean }, command: Command) => {
      const { password, generated } = await passwordOf(options);
      const created = await withServices((s) => s.users.create({ username, password, plan: options.plan, isAdmin: options.admin ?? false }));
      print(
        wantsJson(command),
        { id: created.id, username: created.username, plan: created.plan, is_admin: created.isAdmin, ...(generated ? { password } : {}) },
        `created user ${created.username} (id ${created.id}, plan ${created.plan}${created.isAdmin ? ', admin' : ''})${generated ? `\npassword: ${password}` : ''}`,
      );
    });

  user
    .command('passwd')
    .description('set a user’s password')
    .argument('<username>', 'the user')
    .option('--password <password>', 'the new password (visible in the process list: prefer --password-stdin)')
    .option('--password-stdin', 'read the new password from stdin')
    .addHelpText('after', `\n${PASSWORD_HELP}.`)
    .action(async (username: string, options: PasswordOptions, command: Command) => {
      const { password, generated } = await passwordOf(options);
      await withServices((s) => s.users.setPassword(username, password));
      print(
        wantsJson(command),
        { username, ...(generated ? { password } : {}) },
        `password of ${username} changed${generated ? `\npassword: ${password}` : ''}`,
      );
    });

  user
    .command('plan')
    .description('put a user on a plan (its limits apply to new requests)')
    .argument('<username>', 'the user')
    .argument('<plan>', 'the plan’s name (see SANDBOXD_PLANS)')
    .action(async (username: string, plan: string, _options: unknown, command: Command) => {
      await withServices((s) => s.users.setPlan(username, plan));
      print(wantsJson(command), { username, plan }, `${username} is now on plan ${plan}`);
    });

  const key = program.command('key').description('create API keys (in the store: no server needed)');
  key
    .command('create')
    .description('create an API key for a user and print it (the only time it is shown)')
    .argument('<username>', 'the key’s owner')
    .option('--description <text>', 'what the key is for', 'created with sandboxd key create')
    .option('--expires-at <iso-8601>', 'when the key stops working (default: never)')
    .action(async (username: string, options: { description: string; expiresAt?: string }, command: Command) => {
      const created = await withServices(async (s) => {
        const owner = await s.users.getByUsername(username);
        if (!owner) throw new AppError('NOT_FOUND', `user ${username} not found`);
        return s.apiKeys.create(owner.id, { description: options.description, expiresAt: options.expiresAt ?? null });
      });
      print(
        wantsJson(command),
        { id: created.id, key_prefix: created.keyPrefix, user_id: created.userId, full_key: created.fullKey, expires_at: created.expiresAt },
        created.fullKey,
      );
    });
}
