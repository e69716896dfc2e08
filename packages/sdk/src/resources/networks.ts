/**
 * Private networks between your VMs: members reach each other over TCP at their addresses and at
 * `<vm name>.<network>.internal` (join at create with `vms.create({ networks })`, or later with `addMember`).
 */
import type { NetworkMemberRecord, NetworkRecord } from '../api-types.ts';
import type { CallOptions } from '../call-options.ts';
import type { Transport } from '../transport.ts';

export class Networks {
  constructor(private readonly transport: Transport) {}

  /** Makes a network (a /24 of virtual addresses); `name` is a DNS label. */
  create(options: { name: string } & CallOptions): Promise<NetworkRecord> {
    return this.transport.call('/v1/networks', 'post', { json: { name: options.name }, signal: options.signal });
  }

  /** Your networks, oldest first, with their members. */
  list(options: CallOptions = {}): Promise<NetworkRecord[]> {
    return this.transport.call('/v1/networks', 'get', { signal: options.signal });
  }

  /** A network by id or name. */
  get(network: string, options: CallOptions = {}): Promise<NetworkRecord> {
    return this.transport.call('/v1/networks/{network_id}', 'get', { params: { network_id: network }, signal: options.signal });
  }

  /** Deletes a network (a 409 while it has members). */
  async delete(network: string, options: CallOptions = {}): Promise<void> {
    await this.transport.call('/v1/networks/{network_id}', 'delete', { params: { network_id: network }, signal: options.signal });
  }

  /** Adds a running or paused VM to the network (its session's next VMs join too). */
  addMember(network: string, vmId: string, options: CallOptions = {}): Promise<NetworkMemberRecord> {
    return this.transport.call('/v1/networks/{network_id}/members', 'post', { params: { network_id: network }, json: { vm_id: vmId }, signal: options.signal });
  }

  /** Removes a VM from the network. */
  async removeMember(network: string, vmId: string, options: CallOptions = {}): Promise<void> {
    await this.transport.call('/v1/networks/{network_id}/members/{vm_id}', 'delete', { params: { network_id: network, vm_id: vmId }, signal: options.signal });
  }
}
