/**
 * sandbox template build | ls | logs | rm: templates built on the server from OCI images (plus a repository cloned
 * into /workspace and commands run once); VMs start from them with `sandbox create --template NAME`.
 */
import type { Sandboxd, TemplateRecord } from '@sandboxd/sdk';
import type { Command } from 'commander';
import type { Context, GlobalOptions } from '../context.ts';
import { UsageError } from '../errors.ts';
import { interruptible } from '../interrupt.ts';
import { table } from '../output.ts';
import { integer, keyValue } from '../parse.ts';

/** Lines per page of a log read. */
const PAGE_LINES = 5000;
/** Where `--registry-user`'s password comes from: never argv, which every local user can read in `ps`. */
const REGISTRY_PASSWORD_ENV = 'SANDBOXD_REGISTRY_PASSWORD';

const progressOf = (t: TemplateRecord) =>
  t.status === 'building' && t.progress.step ? `${t.progress.step} (${t.progress.step_index}/${t.progress.step_count})` : '';

/** A template id (`tpl_…`, `default`) as it is, else the id of your template of that name. */
async function templateIdOf(client: Sandboxd, given: string): Promise<string> {
  if (/^tpl_/.test(given) || given === 'default') return given;
  for (let offset = 0; ; offset += 1000) {
    const page = await client.templates.list({ limit: 1000, offset });
    const found = page.find((t) => t.name === given);
    if (found) return found.template_id;
    if (page.length < 1000) throw new UsageError(`you have no template named "${given}" (\`sandbox template ls\` lists them)`);
  }
}

/**
 * Follows a build's log to stderr until it is over (long polling: the server answers on news), with its step on a
 * progress line below the log where progress is shown; answers the final record. Ctrl-C stops following, not the
 * build.
 */
async function follow(ctx: Context, template: { template_id: string; name: string }): Promise<TemplateRecord> {
  const id = template.template_id;
  const progress = ctx.out.steps(template.name);
  try {
    const record = await interruptible(`the build goes on: \`sandbox template logs ${id} --follow\` follows it again`, async (signal) => {
      let after = 0;
      for (;;) {
        const page = await ctx.client.templates.logs(id, { after, limit: PAGE_LINES, waitSeconds: 30, signal });
        for (const line of page.lines) progress.print(line.line);
        progress.update({ step: page.progress.step, index: page.progress.step_index, count: page.progress.step_count });
        after = page.next_after;
        if (page.status !== 'building' && page.lines.length < PAGE_LINES) return ctx.client.templates.get(id);
      }
    });
    progress.finish(record.status === 'ready' ? 'ready' : 'failed');
    return record;
  } finally {
    progress.stop();
  }
}

function ended(ctx: Context, template: TemplateRecord): void {
  ctx.out.result(template, () =>
    template.status === 'ready'
      ? `Template ${template.name} (${template.template_id}) is ready: start VMs with \`sandbox create --template ${template.name}\`.`
      : `Template ${template.name} (${template.template_id}) failed: ${template.error ?? 'no reason recorded'}`,
  );
  if (template.status !== 'ready') process.exitCode = 1;
}

export function registerTemplates(program: Command, context: (options: GlobalOptions) => Context): void {
  const templates = program.command('template').alias('templates').description('build VM templates from OCI images on the server');

  templates
    .command('build')
    .description('build a template from an OCI image (waits, printing the build log to stderr, unless --no-wait)')
    .requiredOption('--name <name>', 'the template name (shared with your snapshots)')
    .requiredOption('--image <ref>', 'an OCI image reference, e.g. registry.example.com/team/python:3.12')
    .option('--git <url>', 'clone this repository (http, https or git URL) into /workspace/<repository name>; the image needs git')
    .option('--branch <branch>', "with --git: the branch to clone (default: the remote's default branch)")
    .option(
      '--run <command>',
      'a shell command run in the build VM after the clone (repeatable: the commands run in order and the first failure fails the build)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option('--env <key=value>', 'environment of the --run commands (repeatable; values are never stored by the server)', keyValue('--env'))
    .option('--vcpus <n>', 'vCPUs of the build VM (1, 2, 4, 6 or 8)', integer('--vcpus', 1, 8))
    .option('--memory <mb>', 'memory of the build VM, MiB', integer('--memory', 256, 8192))
    .option('--registry-user <user>', `pull with these credentials; the password is read from ${REGISTRY_PASSWORD_ENV}`)
    .option('--no-wait', 'answer at once with the template building (follow it with `sandbox template logs`)')
    .action(
      async (
        options: {
          name: string;
          image: string;
          git?: string;
          branch?: string;
          run?: string[];
          env?: Record<string, string>;
          vcpus?: number;
          memory?: number;
          registryUser?: string;
          wait: boolean;
        },
        command: Command,
      ) => {
        const ctx = context(command.optsWithGlobals());
        if (options.branch !== undefined && options.git === undefined) throw new UsageError('--branch needs --git');
        if (options.env !== undefined && options.run === undefined)
          throw new UsageError('--env sets the environment of --run commands: give at least one --run');
        if (options.vcpus !== undefined && ![1, 2, 4, 6, 8].includes(options.vcpus))
          throw new UsageError(`--vcpus must be 1, 2, 4, 6 or 8, got ${options.vcpus}`);
        let registryAuth: { username: string; password: string } | undefined;
        if (options.registryUser !== undefined) {
          const password = process.env[REGISTRY_PASSWORD_ENV];
          if (!password) throw new UsageError(`--registry-user needs the password in ${REGISTRY_PASSWORD_ENV}`);
          registryAuth = { username: options.registryUser, password };
        }
        const created = await ctx.client.templates.create({
          name: options.name,
          ociImage: options.image,
          ...(options.git !== undefined ? { gitCloneUrl: options.git } : {}),
          ...(options.branch !== undefined ? { gitCloneBranch: options.branch } : {}),
          // One script: `set -e` makes the first failing command fail the build, as separate steps would.
          ...(options.run !== undefined ? { postBuildCmd: ['set -e', ...options.run].join('\n') } : {}),
          ...(options.env !== undefined ? { envs: options.env } : {}),
          ...(options.vcpus !== undefined ? { vcpuCount: options.vcpus as 1 | 2 | 4 | 6 | 8 } : {}),
          ...(options.memory !== undefined ? { memoryMb: options.memory } : {}),
          ...(registryAuth ? { registryAuth } : {}),
        });
        if (!options.wait) {
          ctx.out.result(
            created,
            () => `Building template ${created.name} (${created.template_id}); follow it with \`sandbox template logs ${created.template_id} --follow\`.`,
          );
          return;
        }
        ctx.out.info(`Building template ${created.name} (${created.template_id}) from ${created.oci_image}…`);
        ended(ctx, await follow(ctx, created));
      },
    );

  templates
    .command('ls')
    .description('list your templates (and the built-in `default`)')
    .action(async (_options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const list = await ctx.client.templates.list({ limit: 1000 });
      ctx.out.result(list, () =>
        table(
          ['ID', 'NAME', 'STATUS', 'STEP', 'IMAGE', 'CREATED'],
          list.map((t) => [
            t.template_id,
            t.name,
            t.status,
            progressOf(t) || (t.status === 'failed' ? `failed at ${t.progress.step}` : ''),
            t.oci_image ?? '(built-in)',
            t.created_at ?? '',
          ]),
        ),
      );
    });

  templates
    .command('logs')
    .description("print a template build's log (with --follow: until the build is over)")
    .argument('<template>', 'template id or name')
    .option('-f, --follow', 'keep printing new lines until the build ends; exit 1 when it failed')
    .action(async (given: string, options: { follow?: boolean }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const id = await templateIdOf(ctx.client, given);
      if (options.follow) {
        ended(ctx, await follow(ctx, { template_id: id, name: /^tpl_/.test(given) ? id : given }));
        return;
      }
      const lines: string[] = [];
      let page = await ctx.client.templates.logs(id, { limit: PAGE_LINES });
      for (;;) {
        lines.push(...page.lines.map((line) => line.line));
        if (page.lines.length < PAGE_LINES) break;
        page = await ctx.client.templates.logs(id, { after: page.next_after, limit: PAGE_LINES });
      }
      ctx.out.result({ ...page, lines }, () =>
        [...lines, page.status === 'building' ? `(still building: ${page.progress.step})` : page.error ? `(failed: ${page.error})` : `(${page.status})`].join(
          '\n',
        ),
      );
    });

  templates
    .command('rm')
    .description('delete a template (refused while a VM started from it runs; a build under way is cancelled)')
    .argument('<template>', 'template id or name')
    .action(async (given: string, _options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const id = await templateIdOf(ctx.client, given);
      await ctx.client.templates.delete(id);
      ctx.out.result({ deleted: true, template_id: id }, () => `Deleted template ${given === id ? id : `${given} (${id})`}.`);
    });
}
