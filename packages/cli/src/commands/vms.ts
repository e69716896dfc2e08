/** sandbox snapshot / clone / pause / resume / snapshots: VMs as objects you can checkpoint, fork and come back to. */
import type { Command } from 'commander';
import type { Context, GlobalOptions } from '../context.ts';
import { UsageError } from '../errors.ts';
import { keyValues, table } from '../output.ts';
import { integer, keyValue } from '../parse.ts';

/** The VM of `--vm`, else of the session (given, or the current one). */
async function vmOf(ctx: Context, options: { vm?: string }, session: string | undefined): Promise<string> {
  if (options.vm) return options.vm;
  const status = await ctx.client.sessions.status(ctx.requireSession(session));
  if (!status.vm_id) throw new UsageError(`session ${status.session_id} has no VM yet: run something in it first`);
  return status.vm_id;
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

export function registerVmCommands(program: Command, context: (options: GlobalOptions) => Context): void {
  program
    .command('snapshot')
    .description("snapshot a session's running VM (memory, processes, disk); it runs on")
    .argument('[session]', 'session id (default: the current one)')
    .requiredOption('-n, --name <name>', 'name of the snapshot (start VMs from it by this name)')
    .option('--vm <id>', "the VM to snapshot, instead of a session's")
    .option('-m, --metadata <key=value>', 'metadata of the snapshot; repeatable', keyValue('--metadata'))
    .action(async (session: string | undefined, options: { name: string; vm?: string; metadata?: Record<string, string> }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const snapshot = await ctx.client.vms.snapshot(await vmOf(ctx, options, session), {
        name: options.name,
        ...(options.metadata ? { metadata: options.metadata } : {}),
      });
      ctx.out.result(snapshot, () =>
        keyValues([
          ['snapshot', snapshot.snapshot_id],
          ['name', snapshot.name],
          ['of VM', snapshot.source_vm_id],
          ['vcpus / memory', `${snapshot.vcpu_count} / ${snapshot.memory_mb} MiB`],
          ['size', `${mib(snapshot.size_bytes)} (memory ${mib(snapshot.memory_bytes)}, disk layer ${mib(snapshot.disk_bytes)})`],
          ['VM stopped for', `${snapshot.pause_ms} ms`],
        ]),
      );
    });

  program
    .command('clone')
    .description("fork a VM: start new VMs, each in a session of its own, from a snapshot or from the VM's current state (all or nothing)")
    .argument('[session]', 'session whose VM to clone (default: the current one)')
    .option('--vm <id>', "the VM to clone, instead of a session's")
    .option('-s, --snapshot <name>', 'clone this snapshot of yours (default: the VM as it is now)')
    .option('-c, --count <n>', 'how many clones (1 to 100, default 1; your plan may allow fewer)', integer('--count', 1, 100))
    .action(async (session: string | undefined, options: { vm?: string; snapshot?: string; count?: number }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const result = await ctx.client.vms.clone(await vmOf(ctx, options, session), {
        ...(options.snapshot ? { snapshotName: options.snapshot } : {}),
        ...(options.count ? { count: options.count } : {}),
      });
      ctx.out.result(result, () =>
        [
          `from snapshot ${result.snapshot.name} (${result.snapshot.snapshot_id})`,
          table(
            ['VM', 'SESSION', 'STATUS'],
            result.clones.map((vm) => [vm.vm_id, vm.session_id ?? '-', vm.status]),
          ),
        ].join('\n'),
      );
    });

  for (const [name, description] of [
    ['pause', "pause a session's VM: its state goes to disk, it holds no memory or CPU, its lifetime stops counting"],
    ['resume', "resume a paused VM (its session's next exec resumes it too)"],
  ] as const) {
    program
      .command(name)
      .description(description)
      .argument('[session]', 'session id (default: the current one)')
      .option('--vm <id>', "the VM, instead of a session's")
      .action(async (session: string | undefined, options: { vm?: string }, command: Command) => {
        const ctx = context(command.optsWithGlobals());
        const vmId = await vmOf(ctx, options, session);
        const vm = name === 'pause' ? await ctx.client.vms.pause(vmId) : await ctx.client.vms.resume(vmId);
        ctx.out.result(vm, () => `${vm.vm_id}: ${vm.status} (${Math.round(vm.expires_in_seconds)} s of lifetime left)`);
      });
  }

  const snapshots = program.command('snapshots').description('your snapshots');
  snapshots
    .command('ls')
    .description('list your snapshots, newest first')
    .action(async (_options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const list = await ctx.client.snapshots.list();
      ctx.out.result(list, () =>
        list.length === 0
          ? 'No snapshots.'
          : table(
              ['SNAPSHOT', 'NAME', 'OF VM', 'VCPU', 'MEMORY', 'SIZE', 'CREATED'],
              list.map((s) => [s.snapshot_id, s.name, s.source_vm_id ?? '-', String(s.vcpu_count), `${s.memory_mb} MiB`, mib(s.size_bytes), s.created_at]),
            ),
      );
    });
  snapshots
    .command('clone')
    .description('fork a snapshot into new VMs, each in a session of its own (all or nothing)')
    .argument('<snapshot>', 'snapshot id or name')
    .option('-c, --count <n>', 'how many clones (1 to 100, default 1; your plan may allow fewer)', integer('--count', 1, 100))
    .action(async (snapshot: string, options: { count?: number }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const result = await ctx.client.snapshots.clone(snapshot, options.count ? { count: options.count } : {});
      ctx.out.result(result, () =>
        [
          `from snapshot ${result.snapshot.name} (${result.snapshot.snapshot_id})`,
          table(
            ['VM', 'SESSION', 'STATUS'],
            result.clones.map((vm) => [vm.vm_id, vm.session_id ?? '-', vm.status]),
          ),
        ].join('\n'),
      );
    });
  snapshots
    .command('rm')
    .description('delete a snapshot (refused while a VM or another snapshot builds on it)')
    .argument('<snapshot>', 'snapshot id')
    .action(async (id: string, _options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const result = await ctx.client.snapshots.delete(id);
      ctx.out.result(result, () => `deleted ${result.name} (${result.snapshot_id})`);
    });
}
