/** sandbox volume create | ls | rm: persistent volumes, which VMs mount with `sandbox create --volume`. */
import type { Command } from 'commander';
import type { Context, GlobalOptions } from '../context.ts';
import { table } from '../output.ts';
import { sizeMb } from '../parse.ts';

/** How a size in MiB reads best. */
const sizeText = (mb: number) => (mb % 1024 === 0 ? `${mb / 1024} GiB` : `${mb} MiB`);

export function registerVolumes(program: Command, context: (options: GlobalOptions) => Context): void {
  const volumes = program
    .command('volume')
    .alias('volumes')
    .description('persistent volumes: filesystems that outlive VMs (mount them with `sandbox create --volume`)');

  volumes
    .command('create')
    .description('create an empty volume; prints its id')
    .argument('<name>', 'a name unique among your volumes (letters, digits, ".", "_", "-")')
    .requiredOption('--size <size>', 'its size, e.g. 512M or 10G', sizeMb('--size'))
    .action(async (name: string, options: { size: number }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const created = await ctx.client.volumes.create({ name, sizeMb: options.size });
      ctx.out.result(created, () => created.volume_id);
    });

  volumes
    .command('ls')
    .description('list your volumes and the VMs that have them mounted')
    .action(async (_options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const list = await ctx.client.volumes.list();
      ctx.out.result(
        list,
        () =>
          table(
            ['ID', 'NAME', 'SIZE', 'MOUNTED BY', 'CREATED'],
            list.map((v) => [
              v.volume_id,
              v.name,
              sizeText(v.size_mb),
              v.attachments.map((a) => `${a.vm_id}:${a.mount_path}${a.read_only ? ':ro' : ''}`).join(', ') || '-',
              v.created_at,
            ]),
          ) || 'No volumes.',
      );
    });

  volumes
    .command('rm')
    .description('delete a volume and its data (refused while a VM has it mounted)')
    .argument('<id>', 'volume id (from `sandbox volume ls`)')
    .action(async (id: string, _options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      await ctx.client.volumes.delete(id);
      ctx.out.result({ deleted: true, volume_id: id }, () => `Deleted volume ${id}.`);
    });
}
