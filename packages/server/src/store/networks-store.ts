/**
 * Persistence of private networks (migration 0027): networks, their members' addresses, and the networks a
 * session's VMs join. A member row whose VM ended is no member any more (every read here leaves it out); rows of
 * ended VMs are deleted when their network next takes a member (`pruneEndedMembers`).
 */
import type { Executor } from './database.ts';
import type { NetworksTable } from './schema.ts';
import type { Selectable } from 'kysely';

/** A user's private network. */
export interface Network {
  id: string;
  userId: number;
  name: string;
  /** `10.250.<n>.0/24`. */
  cidr: string;
  createdAt: string;
}

/** A VM on a network, with its address there. */
export interface NetworkMember {
  networkId: string;
  vmId: string;
  /** The VM's name (null: none); hosts files name it `<name>.<network>.internal` too. */
  vmName: string | null;
  vmStatus: string;
  /** The node that runs it. */
  nodeId: string;
  address: string;
  joinedAt: string;
}

function toNetwork(row: Selectable<NetworksTable>): Network {
  return { id: row.id, userId: row.user_id, name: row.name, cidr: row.cidr, createdAt: row.created_at };
}

export async function insertNetwork(db: Executor, network: Network): Promise<void> {
  await db
    .insertInto('networks')
    .values({ id: network.id, user_id: network.userId, name: network.name, cidr: network.cidr, created_at: network.createdAt })
    .execute();
}

export async function findNetwork(db: Executor, id: string): Promise<Network | undefined> {
  const row = await db.selectFrom('networks').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toNetwork(row);
}

export async function findNetworkByName(db: Executor, userId: number, name: string): Promise<Network | undefined> {
  const row = await db.selectFrom('networks').selectAll().where('user_id', '=', userId).where('name', '=', name).executeTakeFirst();
  return row && toNetwork(row);
}

/** The user's networks, oldest first. */
export async function listNetworks(db: Executor, userId: number): Promise<Network[]> {
  const rows = await db.selectFrom('networks').selectAll().where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute();
  return rows.map(toNetwork);
}

/** The CIDRs the user's networks hold (to pick a free /24). */
export async function networkCidrs(db: Executor, userId: number): Promise<string[]> {
  const rows = await db.selectFrom('networks').select('cidr').where('user_id', '=', userId).execute();
  return rows.map((row) => row.cidr);
}

export async function deleteNetworkRow(db: Executor, id: string): Promise<boolean> {
  const result = await db.deleteFrom('networks').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

const memberColumns = [
  'network_members.network_id',
  'network_members.vm_id',
  'network_members.address',
  'network_members.joined_at',
  'vms.name as vm_name',
  'vms.status as vm_status',
  'vms.node_id as node_id',
] as const;

type MemberRow = { network_id: string; vm_id: string; address: string; joined_at: string; vm_name: string | null; vm_status: string; node_id: string };

function toMember(row: MemberRow): NetworkMember {
  return {
    networkId: row.network_id,
    vmId: row.vm_id,
    vmName: row.vm_name,
    vmStatus: row.vm_status,
    nodeId: row.node_id,
    address: row.address,
    joinedAt: row.joined_at,
  };
}

function members(db: Executor) {
  return db.selectFrom('network_members').innerJoin('vms', 'vms.id', 'network_members.vm_id').select(memberColumns).where('vms.status', '!=', 'killed');
}

/** The members of a network (VMs that have not ended), by address. */
export async function listNetworkMembers(db: Executor, networkId: string): Promise<NetworkMember[]> {
  const rows = await members(db).where('network_members.network_id', '=', networkId).orderBy('network_members.joined_at').execute();
  return rows.map(toMember);
}

/** The member holding `address` on a network, if any. */
export async function findMemberByAddress(db: Executor, networkId: string, address: string): Promise<NetworkMember | undefined> {
  const row = await members(db).where('network_members.network_id', '=', networkId).where('network_members.address', '=', address).executeTakeFirst();
  return row && toMember(row);
}

/** The networks a VM is a member of, with its address on each. */
export async function networksOfVm(db: Executor, vmId: string): Promise<{ network: Network; address: string }[]> {
  const rows = await db
    .selectFrom('network_members')
    .innerJoin('networks', 'networks.id', 'network_members.network_id')
    .selectAll('networks')
    .select('network_members.address')
    .where('network_members.vm_id', '=', vmId)
    .orderBy('networks.created_at')
    .execute();
  return rows.map((row) => ({ network: toNetwork(row), address: row.address }));
}

/** Deletes the member rows of VMs that ended (their addresses become free). */
export async function pruneEndedMembers(db: Executor, networkId: string): Promise<void> {
  const ended = db.selectFrom('vms').select('id').where('status', '=', 'killed');
  await db.deleteFrom('network_members').where('network_id', '=', networkId).where('vm_id', 'in', ended).execute();
}

/** Addresses taken on a network (ended VMs' rows included: prune them first). */
export async function takenAddresses(db: Executor, networkId: string): Promise<string[]> {
  const rows = await db.selectFrom('network_members').select('address').where('network_id', '=', networkId).execute();
  return rows.map((row) => row.address);
}

export async function insertNetworkMember(db: Executor, member: { networkId: string; vmId: string; address: string; joinedAt: string }): Promise<void> {
  await db
    .insertInto('network_members')
    .values({ network_id: member.networkId, vm_id: member.vmId, address: member.address, joined_at: member.joinedAt })
    .execute();
}

export async function deleteNetworkMember(db: Executor, networkId: string, vmId: string): Promise<boolean> {
  const result = await db.deleteFrom('network_members').where('network_id', '=', networkId).where('vm_id', '=', vmId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Whether a VM has a member row on the network (ended or not). */
export async function hasMemberRow(db: Executor, networkId: string, vmId: string): Promise<boolean> {
  const row = await db.selectFrom('network_members').select('vm_id').where('network_id', '=', networkId).where('vm_id', '=', vmId).executeTakeFirst();
  return row !== undefined;
}

/** The networks a session's VMs join when they start. */
export async function sessionNetworkIds(db: Executor, sessionId: string): Promise<string[]> {
  const rows = await db.selectFrom('session_networks').select('network_id').where('session_id', '=', sessionId).execute();
  return rows.map((row) => row.network_id);
}

export async function addSessionNetwork(db: Executor, sessionId: string, networkId: string): Promise<void> {
  await db
    .insertInto('session_networks')
    .values({ session_id: sessionId, network_id: networkId })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export async function removeSessionNetwork(db: Executor, sessionId: string, networkId: string): Promise<void> {
  await db.deleteFrom('session_networks').where('session_id', '=', sessionId).where('network_id', '=', networkId).execute();
}

/** Which of `vmIds` are on some network. */
export async function vmsOnNetworks(db: Executor, vmIds: string[]): Promise<string[]> {
  if (vmIds.length === 0) return [];
  const rows = await db.selectFrom('network_members').select('vm_id').distinct().where('vm_id', 'in', vmIds).execute();
  return rows.map((row) => row.vm_id);
}
