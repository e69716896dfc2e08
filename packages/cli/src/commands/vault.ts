/**
 * sandbox vault create | ls | show | rm | set | unset | logs: secrets your VMs use without holding them
 * (attach a vault with `sandbox create --vault ID`). A value never comes from an argument (others can read
 * those in `ps`): it comes from an environment variable (`--value-env VAR`), standard input (`--value-stdin`),
 * or a prompt that does not echo it when standard input is a terminal.
 */
import fs from 'node:fs';
import type { Vault, VaultSecretInjection, VaultSecretOptions } from '@sandboxd/sdk';
import type { Command } from 'commander';
import type { Context, GlobalOptions } from '../context.ts';
import { UsageError } from '../errors.ts';
import { keyValues, table } from '../output.ts';
import { integer } from '../parse.ts';

/** Repeatable options collect into a list. */
const collect = (value: string, previous: string[] = []) => [...previous, value];

const VALUE_HELP = `
The value of a secret is never an argument (other users can read arguments with ps). It comes from:
  --value-env VAR   the environment variable VAR of this command, e.g.  OPENAI_API_KEY=… sandbox vault set …
  --value-stdin     standard input (one trailing newline is dropped), e.g.  pass show openai | sandbox vault set …
  a prompt          that does not echo, when neither is given and standard input is a terminal
VMs see the secret as an environment variable of its name holding a placeholder; sandboxd swaps the placeholder
for the value only in HTTPS requests to the secret's hosts (api.example.com, or *.example.com for its subdomains),
and only at its injection point (--inject), never in the path, the query or another header:
  --inject bearer                 Authorization: Bearer <placeholder> (the default)
  --inject basic                  the user or the password of Basic credentials (curl -u "user:$SECRET")
  --inject header:X-Api-Key       the header X-Api-Key, whose whole value is the placeholder
  --inject 'header:Authorization:token '   the header Authorization, value "token <placeholder>" (GitHub)`;

/** `bearer`, `basic`, `header:NAME` or `header:NAME:PREFIX` (the prefix is everything after the second colon). */
export function parseInject(raw: string): VaultSecretInjection {
  if (raw === 'bearer' || raw === 'basic') return { type: raw };
  const match = /^header:([^:]+)(?::(.*))?$/s.exec(raw);
  if (!match) throw new UsageError(`--inject ${raw}: give bearer, basic, header:NAME or header:NAME:PREFIX`);
  return { type: 'header', name: match[1]!, ...(match[2] ? { prefix: match[2] } : {}) };
}

/** An injection point as a person reads it: `Authorization: Bearer`, `X-Api-Key`, `Authorization: token`. */
function describeInject(inject: VaultSecretInjection): string {
  if (inject.type === 'bearer') return 'Authorization: Bearer';
  if (inject.type === 'basic') return 'Authorization: Basic';
  return inject.prefix ? `${inject.name}: ${inject.prefix.trimEnd()}` : (inject.name ?? '');
}

/** Where a secret's value comes from. */
interface ValueSource {
  valueEnv?: string;
  valueStdin?: boolean;
}

/** A secret as `--secret NAME --host H --value-env VAR` gives it, before its value is read. */
interface SecretSpec {
  name: string;
  hosts: string[];
  valueEnv?: string;
  inject?: VaultSecretInjection;
}

/** Reads a line from the terminal without echoing it. */
function promptHidden(prompt: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = () => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n' || char === '\u0004') {
          finish();
          resolve(value);
          return;
        }
        if (char === '\u0003') {
          finish();
          reject(new UsageError('cancelled'));
          return;
        }
        value = char === '\u007f' || char === '\b' ? value.slice(0, -1) : value + char;
      }
    };
    stdin.on('data', onData);
  });
}

/** The value of secret `name`: from --value-env, --value-stdin, or a prompt without echo on a terminal. */
async function readValue(name: string, source: ValueSource): Promise<string> {
  let value: string;
  if (source.valueEnv !== undefined) {
    value = process.env[source.valueEnv] ?? '';
    if (value === '') throw new UsageError(`the environment variable ${source.valueEnv} (--value-env of ${name}) is not set or empty`);
    return value;
  }
  if (source.valueStdin) {
    value = fs.readFileSync(0, 'utf8').replace(/\r?\n$/, '');
  } else if (process.stdin.isTTY) {
    value = await promptHidden(`Value of ${name} (not shown): `);
  } else {
    throw new UsageError(`give the value of ${name} with --value-env VAR or --value-stdin, not as an argument (arguments are visible to other users)`);
  }
  if (value === '') throw new UsageError(`the value of ${name} is empty`);
  return value;
}

/**
 * Parsers of `--secret NAME`, `--host H` and `--value-env VAR` of `vault create`: commander calls them in the order
 * of the command line, so --host and --value-env apply to the --secret before them.
 */
function secretOptions() {
  const specs: SecretSpec[] = [];
  const last = (option: string, raw: string): SecretSpec => {
    const spec = specs[specs.length - 1];
    if (!spec) throw new UsageError(`${option} ${raw} belongs to a secret: put it after --secret NAME`);
    return spec;
  };
  return {
    specs,
    secret: (name: string) => {
      if (specs.some((s) => s.name === name)) throw new UsageError(`--secret ${name} is given twice`);
      specs.push({ name, hosts: [] });
      return specs.map((s) => s.name);
    },
    host: (host: string) => {
      last('--host', host).hosts.push(host);
      return specs.flatMap((s) => s.hosts);
    },
    valueEnv: (variable: string) => {
      last('--value-env', variable).valueEnv = variable;
      return variable;
    },
    inject: (raw: string) => {
      last('--inject', raw).inject = parseInject(raw);
      return raw;
    },
  };
}

function describeVault(vault: Vault): string {
  const about = keyValues([
    ['id', vault.id],
    ['name', vault.name],
    ['description', vault.description],
    ['created', vault.created_at],
    ['updated', vault.updated_at],
  ]);
  const secrets = table(
    ['SECRET', 'HOSTS', 'INJECTED AS', 'UPDATED'],
    vault.secrets.map((s) => [s.name, s.allowed_hosts.join(', '), describeInject(s.inject), s.updated_at]),
  );
  return `${about}\n\n${secrets || 'No secrets. Add one with `sandbox vault set ' + vault.id + ' NAME --host HOST --value-env VAR`.'}`;
}

export function registerVault(program: Command, context: (options: GlobalOptions) => Context): void {
  const vault = program
    .command('vault')
    .alias('vaults')
    .description('vaults: secrets your VMs use without holding them (attach one with `sandbox create --vault ID`)');

  const parse = secretOptions();
  vault
    .command('create')
    .description('create a vault, with secrets or without; prints its id')
    .argument('<name>', 'a name unique among your vaults')
    .option('-d, --description <text>', 'what the vault is for')
    .option(
      '--secret <NAME>',
      'a secret: the environment variable VMs see its placeholder in (repeatable; --host, --value-env and --inject after it are its own)',
      parse.secret,
    )
    .option('--host <host>', 'a host the value of the --secret before it may be sent to over HTTPS (repeatable)', parse.host)
    .option('--value-env <VAR>', 'read the value of the --secret before it from the environment variable VAR', parse.valueEnv)
    .option('--inject <WHERE>', 'where the value of the --secret before it may go: bearer (default), basic, header:NAME[:PREFIX]', parse.inject)
    .option('--value-stdin', 'read the value from standard input (one secret only)')
    .addHelpText(
      'after',
      `${VALUE_HELP}\n\nExample:\n  OPENAI_API_KEY=sk-… sandbox vault create ci --secret OPENAI_API_KEY --host api.openai.com --value-env OPENAI_API_KEY`,
    )
    .action(async (name: string, options: { description?: string; valueStdin?: boolean }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const specs = parse.specs;
      for (const spec of specs) if (spec.hosts.length === 0) throw new UsageError(`--secret ${spec.name} needs at least one --host`);
      const fromStdin = specs.filter((s) => s.valueEnv === undefined);
      if (options.valueStdin && fromStdin.length !== 1) {
        throw new UsageError(`--value-stdin gives one value, but ${fromStdin.length} secrets have no --value-env`);
      }
      const secrets: VaultSecretOptions[] = [];
      for (const spec of specs) {
        const value = await readValue(spec.name, { valueEnv: spec.valueEnv, valueStdin: options.valueStdin });
        secrets.push({ name: spec.name, allowedHosts: spec.hosts, value, ...(spec.inject ? { inject: spec.inject } : {}) });
      }
      const created = await ctx.client.vaults.create(name, {
        ...(options.description !== undefined ? { description: options.description } : {}),
        ...(secrets.length ? { secrets } : {}),
      });
      ctx.out.result(created, () => created.id);
      if (!ctx.out.json) {
        const names = created.secrets.map((s) => `${s.name} (${s.allowed_hosts.join(', ')})`).join(', ') || 'none yet';
        ctx.out.info(`Vault ${created.name} created; secrets: ${names}. Attach it with \`sandbox create --vault ${created.id}\`.`);
      }
    });

  vault
    .command('ls')
    .description('list your vaults')
    .action(async (_options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const list = await ctx.client.vaults.list();
      ctx.out.result(
        list,
        () =>
          table(
            ['ID', 'NAME', 'SECRETS', 'CREATED', 'DESCRIPTION'],
            list.map((v) => [v.id, v.name, v.secrets.map((s) => s.name).join(', ') || '-', v.created_at, v.description ?? '']),
          ) || 'No vaults. Create one with `sandbox vault create NAME --secret NAME --host HOST --value-env VAR`.',
      );
    });

  vault
    .command('show')
    .description("a vault and its secrets' names and hosts (values are never shown)")
    .argument('<id>', 'vault id (from `sandbox vault ls`)')
    .action(async (id: string, _options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const found = await ctx.client.vaults.get(id);
      ctx.out.result(found, () => describeVault(found));
    });

  vault
    .command('rm')
    .description('delete a vault and its secrets (placeholders running VMs hold stop working at once)')
    .argument('<id>', 'vault id (from `sandbox vault ls`)')
    .action(async (id: string, _options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      await ctx.client.vaults.delete(id);
      ctx.out.result({ id, deleted: true }, () => `Vault ${id} deleted`);
    });

  vault
    .command('set')
    .description('add a secret to a vault, or replace the value and hosts of one (running VMs use a new value at their next request)')
    .argument('<id>', 'vault id (from `sandbox vault ls`)')
    .argument('<NAME>', 'the environment variable VMs see its placeholder in, e.g. OPENAI_API_KEY')
    .requiredOption('--host <host>', 'a host the value may be sent to over HTTPS (repeatable)', collect)
    .option('--value-env <VAR>', 'read the value from the environment variable VAR')
    .option('--value-stdin', 'read the value from standard input')
    .option(
      '--inject <WHERE>',
      'where the value may go: bearer, basic, header:NAME[:PREFIX] (default: the secret keeps its own; a new one gets bearer)',
      parseInject,
    )
    .addHelpText(
      'after',
      `${VALUE_HELP}\n\nExamples:\n  pass show openai | sandbox vault set vlt_… OPENAI_API_KEY --host api.openai.com --value-stdin\n  GH=ghp_… sandbox vault set vlt_… GITHUB_TOKEN --host api.github.com --value-env GH --inject 'header:Authorization:token '`,
    )
    .action(
      async (
        id: string,
        name: string,
        options: { host: string[]; valueEnv?: string; valueStdin?: boolean; inject?: VaultSecretInjection },
        command: Command,
      ) => {
        const ctx = context(command.optsWithGlobals());
        if (options.valueEnv !== undefined && options.valueStdin) throw new UsageError('give --value-env or --value-stdin, not both');
        const value = await readValue(name, options);
        const secret = await ctx.client.vaults.setSecret(id, name, {
          value,
          allowedHosts: options.host,
          ...(options.inject ? { inject: options.inject } : {}),
        });
        ctx.out.result(
          secret,
          () => `Secret ${secret.name} set in vault ${id} (hosts: ${secret.allowed_hosts.join(', ')}; injected as ${describeInject(secret.inject)})`,
        );
      },
    );

  vault
    .command('unset')
    .description('delete a secret of a vault (its placeholder stops working at once)')
    .argument('<id>', 'vault id (from `sandbox vault ls`)')
    .argument('<NAME>', 'the secret')
    .action(async (id: string, name: string, _options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      await ctx.client.vaults.deleteSecret(id, name);
      ctx.out.result({ vault_id: id, name, deleted: true }, () => `Secret ${name} deleted from vault ${id}`);
    });

  vault
    .command('logs')
    .description("a vault's request log, newest first: each use of a secret (substituted) and each placeholder sent elsewhere (flagged)")
    .argument('<id>', 'vault id (from `sandbox vault ls`)')
    .option('--flagged', 'only placeholders that went out unchanged to a host the secret is not bound to')
    .option('--substituted', 'only requests that had the value swapped in')
    .option('--vm <vm_id>', 'only requests of this VM')
    .option('--secret <NAME>', 'only uses of this secret')
    .option('--since <time>', 'only entries at or after this ISO time')
    .option('-n, --limit <n>', 'at most this many (default 100)', integer('--limit', 1, 500))
    .option('--cursor <cursor>', 'older entries: the cursor the previous page ended with')
    .action(
      async (
        id: string,
        options: { flagged?: boolean; substituted?: boolean; vm?: string; secret?: string; since?: string; limit?: number; cursor?: string },
        command: Command,
      ) => {
        const ctx = context(command.optsWithGlobals());
        if (options.flagged && options.substituted) throw new UsageError('give --flagged or --substituted, not both');
        const page = await ctx.client.vaults.requestLogs(id, {
          ...(options.flagged ? { outcome: 'flagged' as const } : options.substituted ? { outcome: 'substituted' as const } : {}),
          ...(options.vm ? { vmId: options.vm } : {}),
          ...(options.secret ? { secretName: options.secret } : {}),
          ...(options.since ? { since: options.since } : {}),
          ...(options.limit ? { limit: options.limit } : {}),
          ...(options.cursor ? { cursor: options.cursor } : {}),
        });
        ctx.out.result(
          page,
          () =>
            table(
              ['TIME', 'OUTCOME', 'SECRET', 'VM', 'HOST', 'REQUEST', 'STATUS', 'DETAIL'],
              page.items.map((e) => [
                e.at,
                e.outcome,
                e.secret_name,
                e.vm_id,
                `${e.scheme}://${e.host}`,
                [e.method, e.path].filter(Boolean).join(' ') || '-',
                e.status === null ? '-' : String(e.status),
                e.detail ?? '',
              ]),
            ) || 'No requests logged.',
        );
        if (!ctx.out.json && page.next_cursor) ctx.out.info(`Older entries: sandbox vault logs ${id} --cursor ${page.next_cursor}`);
      },
    );
}
