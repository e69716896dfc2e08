/**
 * Egress policies of VMs and sessions (what a guest may reach, enforced on the host) and a VM's egress log.
 * `target` of `get`/`set` is a VM id (`vm-…`) or a session id.
 */
import type { EgressLogList, EgressPolicy, EgressPolicyInput } from '../api-types.ts';
import type { CallOptions } from '../call-options.ts';
import type { Transport } from '../transport.ts';
import { cursorPages, type PagedList } from '../pagination.ts';

/** A policy in camelCase; omitted fields: `allowHttp`/`allowHttps` true, the rest false or empty. */
export interface EgressPolicyOptions {
  /** Open the Debian, PyPI and npm registries (the server's named list). */
  allowPackageManagers?: boolean;
  allowHttp?: boolean;
  allowHttps?: boolean;
  /** `example.com`, `*.example.com` (subdomains) or `*` (every name). */
  allowedDomains?: string[];
  /** IPv4 addresses or CIDRs, reachable on any port (`0.0.0.0/0`: every public address). */
  allowedCidrs?: string[];
  /**
   * Ports besides HTTP and HTTPS open on the addresses of allowed names, `<port>/tcp` or `<port>/udp` (`22/tcp`,
   * `443/udp` for QUIC). Without them an allowed name gives HTTP and HTTPS only, through the proxy.
   */
  allowedPorts?: string[];
}

/** The request body from the options' camelCase form. */
export function egressPolicyBody(policy: EgressPolicyOptions): EgressPolicyInput {
  return {
    ...(policy.allowPackageManagers !== undefined ? { allow_package_managers: policy.allowPackageManagers } : {}),
    ...(policy.allowHttp !== undefined ? { allow_http: policy.allowHttp } : {}),
    ...(policy.allowHttps !== undefined ? { allow_https: policy.allowHttps } : {}),
    ...(policy.allowedDomains !== undefined ? { allowed_domains: policy.allowedDomains } : {}),
    ...(policy.allowedCidrs !== undefined ? { allowed_cidrs: policy.allowedCidrs } : {}),
    ...(policy.allowedPorts !== undefined ? { allowed_ports: policy.allowedPorts } : {}),
  } as EgressPolicyInput;
}

export interface EgressLogOptions extends CallOptions {
  verdict?: 'allowed' | 'refused';
  /** ISO date-times, inclusive. */
  since?: string;
  until?: string;
  /** A name or an address. */
  destination?: string;
  limit?: number;
  cursor?: string;
}

/** Whether an id names a VM (`vm-…`) rather than a session. */
function isVmId(target: string): boolean {
  return target.startsWith('vm-');
}

export class Egress {
  constructor(private readonly transport: Transport) {}

  /** A VM's policy (its own, its session's, or the default: `source`). */
  getVm(vmId: string, options: CallOptions = {}): Promise<EgressPolicy> {
    return this.transport.call('/v1/vms/{vm_id}/egress', 'get', { params: { vm_id: vmId }, signal: options.signal });
  }

  /** Replaces a VM's policy; the running VM follows it within a second. */
  setVm(vmId: string, policy: EgressPolicyOptions, options: CallOptions = {}): Promise<EgressPolicy> {
    return this.transport.call('/v1/vms/{vm_id}/egress', 'put', { params: { vm_id: vmId }, json: egressPolicyBody(policy), signal: options.signal });
  }

  getSession(sessionId: string, options: CallOptions = {}): Promise<EgressPolicy> {
    return this.transport.call('/v1/sessions/{session_id}/egress', 'get', { params: { session_id: sessionId }, signal: options.signal });
  }

  /** Replaces a session's policy: its running VM follows it (`updated_vm_ids`), its next VMs start with it. */
  setSession(sessionId: string, policy: EgressPolicyOptions, options: CallOptions = {}): Promise<EgressPolicy> {
    return this.transport.call('/v1/sessions/{session_id}/egress', 'put', {
      params: { session_id: sessionId },
      json: egressPolicyBody(policy),
      signal: options.signal,
    });
  }

  /** The policy of a VM or a session, by id. */
  get(target: string, options: CallOptions = {}): Promise<EgressPolicy> {
    return isVmId(target) ? this.getVm(target, options) : this.getSession(target, options);
  }

  /** Replaces the policy of a VM or a session, by id. */
  set(target: string, policy: EgressPolicyOptions, options: CallOptions = {}): Promise<EgressPolicy> {
    return isVmId(target) ? this.setVm(target, policy, options) : this.setSession(target, policy, options);
  }

  /**
   * A VM's connection attempts, newest first: await it for a page (pass `next_cursor` as `cursor` for older ones),
   * or `for await` over every entry of every page.
   */
  log(vmId: string, options: EgressLogOptions = {}): PagedList<EgressLogList['items'][number], EgressLogList> {
    return cursorPages(
      options.cursor,
      (cursor) =>
        this.transport.call('/v1/vms/{vm_id}/egress/log', 'get', {
          params: { vm_id: vmId },
          query: {
            verdict: options.verdict,
            since: options.since,
            until: options.until,
            destination: options.destination,
            limit: options.limit,
            cursor,
          },
          signal: options.signal,
        }),
      (page) => page.items,
    );
  }
}
