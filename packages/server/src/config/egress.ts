/** Settings of VMs' egress: the default policy, the resolver restricted VMs use, the egress log and its events. */
import { normalizeEgressPolicy, OPEN_EGRESS_POLICY, type EgressPolicy } from '../core/egress-policy.ts';
import { parseUpstream } from '../net/egress/policy-resolver.ts';
import { integer, type Setting, type SettingValues } from './kit.ts';

/** `open`, or a JSON egress policy with the API's field names. */
function egressPolicySetting(raw: string): EgressPolicy {
  if (raw.trim() === 'open') return OPEN_EGRESS_POLICY;
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    throw new Error('expected `open` or a JSON object');
  }
  const flag = (name: string) => {
    if (value[name] === undefined) return true;
    if (typeof value[name] !== 'boolean') throw new Error(`${name} must be true or false`);
    return value[name] as boolean;
  };
  const list = (name: string) => {
    const entries = value[name] ?? [];
    if (!Array.isArray(entries) || !entries.every((e) => typeof e === 'string')) throw new Error(`${name} must be an array of strings`);
    return entries as string[];
  };
  try {
    return normalizeEgressPolicy({
      allowPackageManagers: flag('allow_package_managers'),
      allowHttp: flag('allow_http'),
      allowHttps: flag('allow_https'),
      allowedDomains: list('allowed_domains'),
      allowedCidrs: list('allowed_cidrs'),
    });
  } catch (error) {
    throw new Error((error as Error).message);
  }
}

/** The settings of the egress block, by name (each name is unique across the blocks). */
export const egressSettings = {
  egressDefault: {
    env: 'SANDBOXD_EGRESS_DEFAULT',
    description:
      'The egress policy of VMs and sessions created without one: `open` (every public destination, the default) or a JSON policy like {"allow_package_managers":true,"allow_http":true,"allow_https":true,"allowed_domains":["example.com"],"allowed_cidrs":[]}',
    parse: egressPolicySetting,
    fallback: () => OPEN_EGRESS_POLICY,
    defaultText: '`open`',
  },
  egressDnsServers: {
    env: 'SANDBOXD_EGRESS_DNS_SERVERS',
    description:
      'DNS servers the egress resolver of restricted VMs forwards allowed names to, comma-separated IPv4 addresses with an optional port; default: the system resolvers (/etc/resolv.conf)',
    parse: (raw: string) => raw.split(',').map((entry) => `${parseUpstream(entry).host}:${parseUpstream(entry).port}`),
    fallback: () => null as string[] | null,
  },
  egressLogRetentionDays: {
    env: 'SANDBOXD_EGRESS_LOG_RETENTION_DAYS',
    description: 'Days the egress log (GET /v1/vms/{vm_id}/egress/log) keeps connection attempts',
    parse: integer(1, 3650),
    fallback: () => 7,
  },
  egressRefusedEventSeconds: {
    env: 'SANDBOXD_EGRESS_REFUSED_EVENT_SECONDS',
    description: 'At most one egress.refused event per VM in this many seconds (the next one counts the refusals in between)',
    parse: integer(0, 86_400),
    fallback: () => 60,
  },
} satisfies Record<string, Setting<unknown>>;

/** The egress block of the configuration. */
export type EgressConfig = SettingValues<typeof egressSettings>;
