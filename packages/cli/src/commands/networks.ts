/** sandbox network create | ls | rm | join | leave: private networks between your VMs. */
import type { Command } from 'commander';
import type { Context, GlobalOptions } from '../context.ts';
import { table } from '../output.ts';

export function registerNetworks(program: Command, context: (options: GlobalOptions) => Context): void {
  const networks = program
    .command('network')
    .alias('networks')
    .description('private networks: your VMs on one reach each other over TCP at <vm name>.<network>.internal');

  networks
    .command('create')
    .description('create a network; prints its id')
    .argument('<name>', 'a name unique among your networks (a-z, 0-9, "-")')
    .action(async (name: string, _options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const created = await ctx.client.networks.create({ name });
      ctx.out.result(created, () => created.network_id);
    });

  networks
    .command('ls')
    .description('list your networks and their members')
    .action(async (_options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const list = await ctx.client.networks.list();
      ctx.out.result(
        list,
        () =>
          table(
            ['ID', 'NAME', 'CIDR', 'MEMBERS', 'CREATED'],
            list.map((n) => [n.network_id, n.name, n.cidr, n.members.map((m) => `${m.hostnames[0]}=${m.address}`).join(', ') || '-', n.created_at]),
          ) || 'No networks.',
      );
    });

  networks
    .command('rm')
    .description('delete a network (refused while it has members)')
    .argument('<network>', 'network id or name')
    .action(async (network: string, _options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      await ctx.client.networks.delete(network);
      ctx.out.result({ deleted: true, network }, () => `Deleted network ${network}.`);
    });

  networks
    .command('join')
    .description('add a VM to a network; prints its address there')
    .argument('<network>', 'network id or name')
    .argument('<vm_id>', 'a running or paused VM of yours')
    .action(async (network: string, vmId: string, _options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const member = await ctx.client.networks.addMember(network, vmId);
      ctx.out.result(member, () => `${member.address} ${member.hostnames.join(' ')}`);
    });

  networks
    .command('leave')
    .description('remove a VM from a network')
    .argument('<network>', 'network id or name')
    .argument('<vm_id>', 'the VM')
    .action(async (network: string, vmId: string, _options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      await ctx.client.networks.removeMember(network, vmId);
      ctx.out.result({ removed: true, network, vm_id: vmId }, () => `Removed ${vmId} from ${network}.`);
    });
}
