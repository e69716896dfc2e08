/** sandbox egress get | set | log: what a VM or a session may reach (enforced on the host), and what it tried. */
import type { EgressPolicy, EgressPolicyOptions } from '@sandboxd/sdk';
import type { Command } from 'commander';
import type { Context, GlobalOptions } from '../context.ts';
import { UsageError } from '../errors.ts';
import { table } from '../output.ts';
import { integer } from '../parse.ts';

/** Repeatable options collect into a list. */
const collect = (value: string, previous: string[] = []) => [...previous, value];

function describe(policy: EgressPolicy): string {
  const domains = policy.allowed_domains.length ? policy.allowed_domains.join(', ') : '(none)';
  const cidrs = policy.allowed_cidrs.length ? policy.allowed_cidrs.join(', ') : '(none)';
  const ports = policy.allowed_ports?.length ? policy.allowed_ports.join(', ') : '(HTTP and HTTPS only)';
  return [
    `source:            ${policy.source}${policy.enforced ? ' (enforced now)' : ''}`,
    `http / https:      ${policy.allow_http ? 'yes' : 'no'} / ${policy.allow_https ? 'yes' : 'no'}`,
    `package managers:  ${policy.allow_package_managers ? 'yes' : 'no'}`,
    `domains:           ${domains}`,
    `cidrs:             ${cidrs}`,
    `ports of names:    ${ports}`,
    ...(policy.updated_vm_ids?.length ? [`running VMs updated: ${policy.updated_vm_ids.join(', ')}`] : []),
  ].join('\n');
}

export function registerEgress(program: Command, context: (options: GlobalOptions) => Context): void {
  const egress = program.command('egress').description('egress policies: what a VM or a session may reach, enforced on the host');

  egress
    .command('get')
    .description('show the egress policy of a VM (vm-…) or a session')
    .argument('[vm_or_session]', 'a VM id or a session id (default: the current session)')
    .action(async (target: string | undefined, _options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const policy = await ctx.client.egress.get(target ?? ctx.requireSession(undefined));
      ctx.out.result(policy, () => describe(policy));
    });

  egress
    .command('set')
    .description('replace the egress policy of a VM or a session (a running VM follows it within a second)')
    .argument('[vm_or_session]', 'a VM id or a session id (default: the current session)')
    .option('--allow-domain <name>', 'a name the guest may reach: example.com, *.example.com or * (repeatable)', collect)
    .option('--allow-cidr <cidr>', 'an IPv4 address or CIDR the guest may reach on any port (repeatable)', collect)
    .option('--allow-port <port/proto>', "a port besides HTTP and HTTPS open on allowed names' addresses: 22/tcp, 443/udp (repeatable)", collect)
    .option('--package-managers', 'open the Debian, PyPI and npm registries')
    .option('--no-http', 'refuse port 80')
    .option('--no-https', 'refuse port 443')
    .option('--open', 'every public destination (no restriction)')
    .action(
      async (
        target: string | undefined,
        options: {
          allowDomain?: string[];
          allowCidr?: string[];
          allowPort?: string[];
          packageManagers?: boolean;
          http: boolean;
          https: boolean;
          open?: boolean;
        },
        command: Command,
      ) => {
        const ctx = context(command.optsWithGlobals());
        if (options.open && (options.allowDomain || options.allowCidr || options.allowPort))
          throw new UsageError('--open allows everything: leave out --allow-domain, --allow-cidr and --allow-port');
        const policy: EgressPolicyOptions = options.open
          ? { allowPackageManagers: true, allowHttp: true, allowHttps: true, allowedDomains: ['*'], allowedCidrs: ['0.0.0.0/0'] }
          : {
              allowPackageManagers: options.packageManagers ?? false,
              allowHttp: options.http,
              allowHttps: options.https,
              allowedDomains: options.allowDomain ?? [],
              allowedCidrs: options.allowCidr ?? [],
              allowedPorts: options.allowPort ?? [],
            };
        const updated = await ctx.client.egress.set(target ?? ctx.requireSession(undefined), policy);
        ctx.out.result(updated, () => describe(updated));
      },
    );

  egress
    .command('log')
    .description("a VM's connection attempts, newest first")
    .argument('<vm_id>', 'the VM')
    .option('--refused', 'only refused attempts')
    .option('--allowed', 'only allowed attempts')
    .option('--destination <name_or_address>', 'only attempts to this name or address')
    .option('--since <time>', 'only attempts at or after this ISO time')
    .option('-n, --limit <n>', 'at most this many (default 100)', integer('--limit', 1, 500))
    .action(async (vmId: string, options: { refused?: boolean; allowed?: boolean; destination?: string; since?: string; limit?: number }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      if (options.refused && options.allowed) throw new UsageError('give --refused or --allowed, not both');
      const page = await ctx.client.egress.log(vmId, {
        ...(options.refused ? { verdict: 'refused' as const } : options.allowed ? { verdict: 'allowed' as const } : {}),
        ...(options.destination ? { destination: options.destination } : {}),
        ...(options.since ? { since: options.since } : {}),
        ...(options.limit ? { limit: options.limit } : {}),
      });
      ctx.out.result(
        page,
        () =>
          table(
            ['TIME', 'VERDICT', 'PROTO', 'NAME', 'ADDRESS', 'PORT', 'SENT', 'RECEIVED', 'REASON'],
            page.items.map((e) => [
              e.at,
              e.verdict,
              e.scheme ?? e.protocol,
              e.name ?? '-',
              e.address ?? '-',
              e.port === null ? '-' : String(e.port),
              e.bytes_sent === null ? '-' : String(e.bytes_sent),
              e.bytes_received === null ? '-' : String(e.bytes_received),
              e.reason ?? '',
            ]),
          ) || 'No connection attempts logged.',
      );
    });
}
