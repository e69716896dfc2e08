/** sandbox create: a new session, which becomes the current one. */
import type { LifecycleHooksOptions } from '@sandboxd/sdk';
import type { Command } from 'commander';
import type { Context, GlobalOptions } from '../context.ts';
import { UsageError } from '../errors.ts';
import { keyValues } from '../output.ts';
import { integer, keyValue, volumeMount, type VolumeMountOption } from '../parse.ts';

export function registerCreate(program: Command, context: (options: GlobalOptions) => Context): void {
  program
    .command('create')
    .description('create a session (its VM starts on the first exec, or now with --prewarm); prints its id')
    .option('--vcpus <n>', 'vCPUs: 1, 2, 4, 6 or 8 (default 2)', integer('--vcpus', 1, 8))
    .option('--memory <mb>', 'guest memory in MiB, 128 to 8192', integer('--memory', 128, 8192))
    .option('--lifetime <seconds>', 'seconds from VM start until it is killed, 20 to 2592000 (default 300)', integer('--lifetime', 20, 2_592_000))
    .option('--metadata <key=value>', 'metadata for filtering (`sandbox ls --metadata`); repeatable', keyValue('--metadata'))
    .option('--env <NAME=value>', 'environment of every execution; repeatable', keyValue('--env'))
    .option('--prewarm', 'start the VM now, in the background')
    .option('--volume <id:/path[:ro]>', 'start the VM now with this volume mounted at /path (read-only with :ro); repeatable, up to 4', volumeMount('--volume'))
    .option('--template <name>', 'start its VMs from your template (`sandbox template ls`) or snapshot of this name')
    .option(
      '--pre-stop <command>',
      'a bash command its VMs run before they are killed, paused or reach the end of their lifetime (output kept in `sandbox executions`)',
    )
    .option('--pre-stop-timeout <seconds>', 'how long --pre-stop may run, 1 to 120 (default 30)', integer('--pre-stop-timeout', 1, 120))
    .option(
      '--vault <id>',
      'attach your vault (`sandbox vault ls`): its secrets are environment variables holding placeholders, swapped for the values only in HTTPS requests to their hosts; repeatable',
      collect,
    )
    .action(async (options: CreateOptions, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      if (options.vcpus !== undefined && ![1, 2, 4, 6, 8].includes(options.vcpus))
        throw new UsageError(`--vcpus must be 1, 2, 4, 6 or 8, got ${options.vcpus}`);
      if (options.preStopTimeout !== undefined && options.preStop === undefined) throw new UsageError('--pre-stop-timeout needs --pre-stop');
      if (options.volume) return createWithVolumes(ctx, options, options.volume);
      const session = await ctx.client.sessions.create({
        ...(options.vcpus !== undefined ? { vcpuCount: options.vcpus as 1 | 2 | 4 | 6 | 8 } : {}),
        ...(options.memory !== undefined ? { memoryMb: options.memory } : {}),
        ...(options.lifetime !== undefined ? { vmLifetimeSeconds: options.lifetime } : {}),
        ...(options.metadata ? { metadata: options.metadata } : {}),
        ...(options.env ? { env: options.env } : {}),
        ...(options.prewarm ? { prewarm: true } : {}),
        ...(options.template !== undefined ? { template: options.template } : {}),
        ...lifecycleHooksOf(options),
        ...(options.vault ? { vaultIds: options.vault } : {}),
      });
      ctx.remember(session.id);
      const info = session.created!;
      ctx.out.result(info, () => session.id);
      if (!ctx.out.json) {
        ctx.out.info(
          keyValues([
            ['vcpus', info.vcpu_count],
            ['memory', `${info.memory_mb} MiB`],
            ['lifetime', `${info.vm_lifetime_seconds} s`],
            ['status', info.status],
          ]),
        );
      }
    });
}

interface CreateOptions {
  vcpus?: number;
  memory?: number;
  lifetime?: number;
  metadata?: Record<string, string>;
  env?: Record<string, string>;
  prewarm?: boolean;
  volume?: VolumeMountOption[];
  template?: string;
  preStop?: string;
  preStopTimeout?: number;
  vault?: string[];
}

/** Repeatable options collect into a list. */
const collect = (value: string, previous: string[] = []) => [...previous, value];

/** `lifecycleHooks` of the SDK's create options from --pre-stop and --pre-stop-timeout. */
function lifecycleHooksOf(options: CreateOptions): { lifecycleHooks?: LifecycleHooksOptions } {
  if (options.preStop === undefined) return {};
  return {
    lifecycleHooks: { preStop: { command: options.preStop, ...(options.preStopTimeout !== undefined ? { timeoutSeconds: options.preStopTimeout } : {}) } },
  };
}

/** Volumes are mounted by a VM, not a session: start the VM now (in a new session, which becomes the current one). */
async function createWithVolumes(ctx: Context, options: CreateOptions, volumes: VolumeMountOption[]): Promise<void> {
  if (options.env) throw new UsageError('--env is a session setting: it cannot be combined with --volume (set variables in your commands)');
  const vm = await ctx.client.vms.create({
    ...(options.vcpus !== undefined ? { vcpuCount: options.vcpus as 1 | 2 | 4 | 6 | 8 } : {}),
    ...(options.memory !== undefined ? { memoryMb: options.memory } : {}),
    ...(options.lifetime !== undefined ? { vmLifetimeSeconds: options.lifetime } : {}),
    ...(options.metadata ? { metadata: options.metadata } : {}),
    ...(options.template !== undefined ? { template: options.template } : {}),
    ...lifecycleHooksOf(options),
    ...(options.vault ? { vaultIds: options.vault } : {}),
    volumes,
  });
  const sessionId = vm.session_id!;
  ctx.remember(sessionId);
  ctx.out.result(vm, () => sessionId);
  if (!ctx.out.json) {
    const mounts = volumes.map((v) => `${v.volumeId} at ${v.mountPath}${v.readOnly ? ' (read-only)' : ''}`).join(', ');
    ctx.out.info(
      keyValues([
        ['vm', vm.vm_id],
        ['vcpus', vm.vcpu_count],
        ['memory', `${vm.memory_mb} MiB`],
        ['volumes', mounts],
        ['status', vm.status],
      ]),
    );
  }
}
