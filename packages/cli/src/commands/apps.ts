/**
 * sandbox deploy [folder], and sandbox apps ls | show | logs | deployments | rollback | restart | rm: a folder with a
 * `sandboxd.yaml` deployed as a long-running service at its own URL; each deploy is a new version that goes live
 * without downtime, and an earlier one can be brought back.
 */
import fs from 'node:fs';
import path from 'node:path';
import { appNameOfFolder, manifestName, SandboxdError, type AppDeploymentRecord, type AppRecord } from '@sandboxd/sdk';
import type { Command } from 'commander';
import type { Context, GlobalOptions } from '../context.ts';
import { EXIT, UsageError } from '../errors.ts';
import { interruptible } from '../interrupt.ts';
import { keyValues, table } from '../output.ts';
import { packApp, readManifest } from '../pack-app.ts';
import { formatBytes } from '../progress.ts';
import { integer } from '../parse.ts';

/**
 * Prints a deployment's log to stderr as it comes (each line after `[v<version>] `) until it is over, then its
 * outcome: the URL on stdout when it went live, else the error (exit 1). Ctrl-C stops following, not the deployment.
 */
async function followDeployment(ctx: Context, app: AppRecord, deployment: AppDeploymentRecord): Promise<void> {
  const prefix = `[v${deployment.version}] `;
  const final = await interruptible(
    `the deployment goes on: \`sandbox apps deployments ${app.name}\` shows how it went, \`sandbox apps logs ${app.name} --deployment ${deployment.version} --follow\` follows it`,
    (signal) =>
      ctx.client.apps.waitForDeployment(app.name, deployment.version, {
        signal,
        onLine: (line) => !ctx.out.json && process.stderr.write(`${prefix}${line}\n`),
      }),
  );
  const current = final.status === 'live' ? await ctx.client.apps.get(app.name) : app;
  ctx.out.result({ app: current, deployment: final }, () => (final.status === 'live' ? current.url : ''));
  if (final.status === 'live') {
    if (!ctx.out.json) {
      ctx.out.info(`${app.name} v${final.version} is live at ${current.url}`);
      for (const line of domainLines(current)) ctx.out.info(`  ${line}`);
    }
    return;
  }
  if (!ctx.out.json) {
    const why = final.error ?? (final.status === 'superseded' ? 'a newer deployment replaced it before it went live' : `it ended ${final.status}`);
    process.stderr.write(`sandbox: ${app.name} v${final.version} did not go live: ${why}\n`);
  }
  process.exitCode = EXIT.error;
}

/** The app's custom domains, one line each: its URL once verified, else what it waits for. */
function domainLines(app: AppRecord): string[] {
  return app.custom_domains.map((d) =>
    d.status === 'verified'
      ? `and at ${d.url} (custom domain)`
      : `${d.domain}: pending until its DNS TXT record is verified (\`sandbox domains verify ${d.id}\`)`,
  );
}

const statusOf = (a: AppRecord) => a.status + (a.status === 'deploying' && a.latest_version !== a.live_version ? ` v${a.latest_version}` : '');

export function registerApps(program: Command, context: (options: GlobalOptions) => Context): void {
  program
    .command('deploy')
    .description('deploy a folder as an app at its own URL (its sandboxd.yaml says how to start it); prints the URL once it is live')
    .argument('[folder]', 'the app folder, with sandboxd.yaml at its root', '.')
    .option('--no-wait', 'answer once the folder is uploaded, without following the deployment')
    .action(async (folderArg: string, options: { wait: boolean }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const folder = path.resolve(folderArg);
      if (!fs.existsSync(folder) || !fs.statSync(folder).isDirectory()) throw new UsageError(`${folderArg} is not a folder`);
      const manifest = readManifest(folder);
      const ownName = manifestName(manifest.text);
      const name = ownName ?? appNameOfFolder(path.basename(folder));
      const spinner = ctx.out.spinner(`Packing ${folderArg}…`);
      let deployed: { app: AppRecord; deployment: AppDeploymentRecord };
      try {
        const packed = await packApp(folder);
        spinner.update(`Uploading ${name} (${formatBytes(packed.tarball.length)}, ${packed.entries} files)…`);
        deployed = await ctx.client.apps.deploy(packed.tarball, ownName === undefined ? { name } : {}).catch((error: unknown) => {
          // A manifest (or an archive) the server refused is the user's input to change: a usage error, exit 2.
          if (error instanceof SandboxdError && error.status === 400) throw new UsageError(`${folderArg}: ${error.message}`);
          throw error;
        });
      } finally {
        spinner.stop();
      }
      const { app, deployment } = deployed;
      if (!options.wait) {
        ctx.out.result(
          deployed,
          () => `Deploying ${app.name} v${deployment.version}: follow it with \`sandbox apps logs ${app.name} --deployment ${deployment.version} --follow\`.`,
        );
        return;
      }
      if (!ctx.out.json) ctx.out.info(`Deploying ${app.name} v${deployment.version} (${app.url})…`);
      await followDeployment(ctx, app, deployment);
    });

  const apps = program.command('apps').alias('app').description('your deployed apps: list, logs, deployments, rollback, restart, delete');

  apps
    .command('ls')
    .description('list your apps with their status, live version and URL')
    .action(async (_options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const list = await ctx.client.apps.list();
      ctx.out.result(
        list,
        () =>
          table(
            ['NAME', 'STATUS', 'LIVE', 'REPLICAS', 'URL'],
            list.map((a) => [a.name, statusOf(a), a.live_version === null ? '-' : `v${a.live_version}`, String(a.replicas), a.url]),
          ) || 'No apps. Deploy a folder with `sandbox deploy`.',
      );
    });

  apps
    .command('show')
    .description("an app's status, URL and versions")
    .argument('<app>', 'app name or id')
    .action(async (given: string, _options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const app = await ctx.client.apps.get(given);
      ctx.out.result(app, () =>
        keyValues([
          ['app', app.name],
          ['id', app.id],
          ['status', app.status],
          ['url', app.url],
          ...app.custom_domains.map((d): [string, unknown] => ['domain', d.status === 'verified' ? d.url : `${d.domain} (pending: ${d.id})`]),
          ['live version', app.live_version],
          ['latest version', app.latest_version],
          ['replicas', app.replicas],
          ['created', app.created_at],
          ['updated', app.updated_at],
        ]),
      );
    });

  apps
    .command('logs')
    .description("print an app's output (its start command's stdout and stderr), or with --deployment a deployment's log")
    .argument('<app>', 'app name or id')
    .option('-f, --follow', 'keep printing new lines (Ctrl-C stops; a deployment log ends by itself when the deployment is over)')
    .option(
      '--deployment <version>',
      "print this version's deployment log instead (upload, install, start, health checks)",
      integer('--deployment', 1, 2 ** 31),
    )
    .action(async (given: string, options: { follow?: boolean; deployment?: number }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const lines: string[] = [];
      const read = (signal?: AbortSignal) =>
        options.deployment !== undefined
          ? ctx.client.apps.deploymentLogs(given, options.deployment, { follow: options.follow ?? false, ...(signal ? { signal } : {}) })
          : ctx.client.apps.logs(given, { follow: options.follow ?? false, ...(signal ? { signal } : {}) });
      if (options.follow) {
        // Lines as they come (JSON: one object per line), until the log ends or Ctrl-C.
        await interruptible('stopped following', async (signal) => {
          for await (const line of read(signal)) process.stdout.write(ctx.out.json ? `${JSON.stringify({ line })}\n` : `${line}\n`);
        });
        return;
      }
      for await (const line of read()) lines.push(line);
      ctx.out.result({ lines }, () => lines.join('\n'));
    });

  apps
    .command('deployments')
    .description("list an app's deployments (versions), newest first")
    .argument('<app>', 'app name or id')
    .action(async (given: string, _options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const list = await ctx.client.apps.deployments(given);
      ctx.out.result(
        list,
        () =>
          table(
            ['VERSION', 'STATUS', 'CREATED', 'LIVE AT', 'ENDED', 'ERROR'],
            list.map((d) => [`v${d.version}`, d.status, d.created_at, d.live_at ?? '-', d.ended_at ?? '-', d.error ?? '']),
          ) || 'No deployments.',
      );
    });

  apps
    .command('rollback')
    .description('bring back an earlier version (default: the one live before the current), without downtime')
    .argument('<app>', 'app name or id')
    // A positional version, not `--version`: commander gives `--version` anywhere on the line to the program's own.
    .argument('[version]', 'the version to bring back (`sandbox apps deployments` lists them)', integer('version', 1, 2 ** 31))
    .option('--no-wait', 'answer at once, without following the deployment')
    .action(async (given: string, version: number | undefined, options: { wait: boolean }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const { app, deployment } = await ctx.client.apps.rollback(given, version !== undefined ? { version } : {});
      if (!options.wait) {
        ctx.out.result({ app, deployment }, () => `Rolling ${app.name} back to v${deployment.version}.`);
        return;
      }
      if (!ctx.out.json) ctx.out.info(`Rolling ${app.name} back to v${deployment.version}…`);
      await followDeployment(ctx, app, deployment);
    });

  apps
    .command('restart')
    .description("start the live version's VMs again (new ones take over once healthy)")
    .argument('<app>', 'app name or id')
    .option('--no-wait', 'answer at once, without following the restart')
    .action(async (given: string, options: { wait: boolean }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const { app, deployment } = await ctx.client.apps.restart(given);
      if (!options.wait) {
        ctx.out.result({ app, deployment }, () => `Restarting ${app.name} (v${deployment.version}).`);
        return;
      }
      if (!ctx.out.json) ctx.out.info(`Restarting ${app.name} (v${deployment.version})…`);
      await followDeployment(ctx, app, deployment);
    });

  apps
    .command('rm')
    .description('delete an app: its VMs stop and its URL stops answering at once')
    .argument('<app>', 'app name or id')
    .action(async (given: string, _options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      await ctx.client.apps.delete(given);
      ctx.out.result({ deleted: true, app: given }, () => `Deleted app ${given}.`);
    });
}
