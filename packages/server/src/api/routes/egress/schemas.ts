/** Egress policy and egress log records, and their mapping from the core's shapes. */
import { Type, type Static } from 'typebox';
import { MAX_EGRESS_CIDRS, MAX_EGRESS_DOMAINS, MAX_EGRESS_PORTS, type EgressPolicyInput as CorePolicyInput } from '../../../core/egress-policy.ts';
import type { EgressPolicyView } from '../../../core/egress-policy.ts';
import { StringEnum } from '../../schemas/common.ts';
import type { EgressLogRecord } from '../../../activity.ts';

const NullableString = Type.Union([Type.String(), Type.Null()]);

/** A policy in a request: omitted fields take the restrictive side except the two schemes. */
export const EgressPolicyInput = Type.Object(
  {
    allow_package_managers: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'Open the Debian, PyPI and npm registries (deb.debian.org, security.debian.org, pypi.org, files.pythonhosted.org, registry.npmjs.org, …) over HTTP and HTTPS',
      }),
    ),
    allow_http: Type.Optional(
      Type.Boolean({ default: true, description: 'Port 80 at all (to allowed names and CIDRs); false refuses every port-80 connection' }),
    ),
    allow_https: Type.Optional(
      Type.Boolean({
        default: true,
        description: 'Port 443 at all (to allowed names and CIDRs); false also closes UDP/443 (QUIC) unless allowed_ports names 443/udp',
      }),
    ),
    allowed_domains: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 255 }), {
        maxItems: MAX_EGRESS_DOMAINS,
        default: [],
        description:
          "Names the guest may resolve and reach over HTTP and HTTPS, through the proxy (matched on its DNS question, the TLS SNI and every HTTP request's Host): `example.com`, `*.example.com` (its subdomains) or `*` (every name). Other ports and protocols to their addresses only as allowed_ports names them: the addresses may be shared (CDNs) with any other name",
      }),
    ),
    allowed_cidrs: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 18 }), {
        maxItems: MAX_EGRESS_CIDRS,
        default: [],
        description:
          'IPv4 addresses or CIDRs the guest may reach on any port and protocol (explicit address grants), and by raw address over HTTP (`0.0.0.0/0`: every public address)',
      }),
    ),
    allowed_ports: Type.Optional(
      Type.Array(Type.String({ pattern: '^\\s*\\d{1,5}\\s*/\\s*([tT][cC][pP]|[uU][dD][pP])\\s*$', maxLength: 16 }), {
        maxItems: MAX_EGRESS_PORTS,
        default: [],
        description:
          "Ports besides HTTP and HTTPS that the addresses of allowed names (as the VM's own DNS answers gave them) are open on, `<port>/tcp` or `<port>/udp`: e.g. `22/tcp`, `5432/tcp`, `443/udp` (QUIC). Not 80/tcp, 443/tcp (the proxy) or 53 (the policy resolver). Without it an allowed name gives HTTP and HTTPS only",
      }),
    ),
  },
  { $id: 'EgressPolicyInput', title: 'EgressPolicyInput', additionalProperties: false },
);

export const EgressPolicyRecord = Type.Object(
  {
    allow_package_managers: Type.Boolean(),
    allow_http: Type.Boolean(),
    allow_https: Type.Boolean(),
    allowed_domains: Type.Array(Type.String()),
    allowed_cidrs: Type.Array(Type.String()),
    allowed_ports: Type.Array(Type.String(), { description: 'Canonical `<port>/<tcp|udp>`, tcp first, ascending' }),
    source: StringEnum(['vm', 'session', 'default'] as const, { description: "Whose policy it is: the VM's own, its session's, or the deployment's default" }),
    enforced: Type.Boolean({ description: 'The host enforces it on the running VM now (false for an open policy, or a VM that is not running)' }),
    updated_vm_ids: Type.Optional(Type.Array(Type.String(), { description: "A session's PUT: the running VMs that follow the new policy" })),
  },
  { $id: 'EgressPolicy', title: 'EgressPolicy' },
);

export const EgressLogEntryRecord = Type.Object(
  {
    id: Type.Integer(),
    at: Type.String({ format: 'date-time' }),
    vm_id: Type.String(),
    protocol: StringEnum(['tcp', 'udp', 'icmp', 'dns', 'other'] as const, { description: '`dns`: a name lookup the policy refused' }),
    scheme: Type.Union([StringEnum(['http', 'https'] as const), Type.Null()], { description: 'Set when the proxy handled the connection (ports 80 and 443)' }),
    name: Type.Union([Type.String(), Type.Null()], {
      description: 'The name asked for (DNS question, SNI, Host), or the one whose DNS answer gave the address',
    }),
    address: NullableString,
    port: Type.Union([Type.Integer(), Type.Null()]),
    bytes_sent: Type.Union([Type.Integer(), Type.Null()], { description: 'Guest to destination (proxied connections only)' }),
    bytes_received: Type.Union([Type.Integer(), Type.Null()]),
    verdict: StringEnum(['allowed', 'refused'] as const),
    reason: Type.Union([Type.String(), Type.Null()], { description: 'Why it was refused' }),
  },
  { $id: 'EgressLogEntry', title: 'EgressLogEntry' },
);

export const EgressLogList = Type.Object(
  {
    items: Type.Array(Type.Ref('EgressLogEntry')),
    next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as cursor for the next (older) page; null on the last page' }),
  },
  { $id: 'EgressLogList', title: 'EgressLogList' },
);

/** `egress_policy` of a create request (by reference; typed as the schema it names). */
export const EgressPolicyRef = Type.Ref('EgressPolicyInput') as unknown as typeof EgressPolicyInput;

export const EGRESS_SCHEMAS = [EgressPolicyInput, EgressPolicyRecord, EgressLogEntryRecord, EgressLogList];

/** The core's policy from a request's (defaults filled in; not yet validated: `EgressService.normalize`). */
export function toEgressPolicy(input: Static<typeof EgressPolicyInput>): CorePolicyInput {
  return {
    allowPackageManagers: input.allow_package_managers ?? false,
    allowHttp: input.allow_http ?? true,
    allowHttps: input.allow_https ?? true,
    allowedDomains: input.allowed_domains ?? [],
    allowedCidrs: input.allowed_cidrs ?? [],
    allowedPorts: input.allowed_ports ?? [],
  };
}

export function toEgressPolicyRecord(
  view: Pick<EgressPolicyView, 'policy' | 'source'> & { enforced?: boolean; updatedVmIds?: string[] },
): Static<typeof EgressPolicyRecord> {
  return {
    allow_package_managers: view.policy.allowPackageManagers,
    allow_http: view.policy.allowHttp,
    allow_https: view.policy.allowHttps,
    allowed_domains: view.policy.allowedDomains,
    allowed_cidrs: view.policy.allowedCidrs,
    allowed_ports: view.policy.allowedPorts,
    source: view.source,
    enforced: view.enforced ?? false,
    ...(view.updatedVmIds ? { updated_vm_ids: view.updatedVmIds } : {}),
  };
}

export function toEgressLogEntryRecord(entry: EgressLogRecord): Static<typeof EgressLogEntryRecord> {
  return {
    id: entry.id,
    at: entry.at,
    vm_id: entry.vmId,
    protocol: entry.protocol,
    scheme: entry.scheme,
    name: entry.name,
    address: entry.address,
    port: entry.port,
    bytes_sent: entry.bytesSent,
    bytes_received: entry.bytesReceived,
    verdict: entry.verdict,
    reason: entry.reason,
  };
}
