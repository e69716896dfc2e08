/** Schemas of private networks (issue 38). */
import { Type, type Static } from 'typebox';
import { MAX_MEMBERS_PER_NETWORK, memberHostnames, NETWORK_NAME_PATTERN, type NetworkMember, type NetworkWithMembers } from '../../../core/networks.ts';

export const NetworkMemberRecord = Type.Object(
  {
    vm_id: Type.String(),
    vm_name: Type.Union([Type.String(), Type.Null()], { description: "The VM's name (null: none)" }),
    address: Type.String({ description: "The VM's address on the network (kept while it is paused)" }),
    hostnames: Type.Array(Type.String(), {
      description:
        'Its names on the network, in the members\' /etc/hosts: `<vm name>.<network>.internal` (the name lower-cased, other characters as "-") and `<vm id>.<network>.internal`',
    }),
    status: Type.String({ description: "The VM's status (`starting`, `active` or `paused`)" }),
    joined_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'NetworkMemberRecord', title: 'NetworkMemberRecord' },
);

export const NetworkRecord = Type.Object(
  {
    network_id: Type.String(),
    name: Type.String(),
    cidr: Type.String({ description: "The network's addresses (`10.250.<n>.0/24`); members get .2 onwards" }),
    user_id: Type.Integer({ description: 'The owner' }),
    created_at: Type.String({ format: 'date-time' }),
    members: Type.Array(Type.Ref('NetworkMemberRecord'), { description: 'The VMs on it that have not ended' }),
  },
  { $id: 'NetworkRecord', title: 'NetworkRecord' },
);

export const NetworkName = Type.String({
  pattern: NETWORK_NAME_PATTERN,
  minLength: 1,
  maxLength: 63,
  description: 'Unique among your networks; a DNS label (a-z, 0-9 and "-"), since members are named `<vm name>.<network>.internal`',
});

export const NetworkIdParams = Type.Object({ network_id: Type.String({ minLength: 1, maxLength: 64, description: 'The network id (`net-…`) or its name' }) });

/** `networks` of POST /v1/vms and POST /v1/sessions. */
export const NetworkRefs = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
  maxItems: 16,
  description: `Private networks (your networks' names or ids) the VM joins at start, as do the session's next VMs (see POST /v1/networks). Members reach each other over TCP at their addresses and at \`<vm name>.<network>.internal\`; at most ${MAX_MEMBERS_PER_NETWORK} per network`,
});

export function toNetworkMemberRecord(member: NetworkMember, network: { name: string }): Static<typeof NetworkMemberRecord> {
  return {
    vm_id: member.vmId,
    vm_name: member.vmName,
    address: member.address,
    hostnames: memberHostnames(member, network),
    status: member.vmStatus,
    joined_at: member.joinedAt,
  };
}

export function toNetworkRecord({ network, members }: NetworkWithMembers): Static<typeof NetworkRecord> {
  return {
    network_id: network.id,
    name: network.name,
    cidr: network.cidr,
    user_id: network.userId,
    created_at: network.createdAt,
    members: members.map((member) => toNetworkMemberRecord(member, network)),
  };
}

export const NETWORK_SCHEMAS = [NetworkMemberRecord, NetworkRecord];
