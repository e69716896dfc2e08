/**
 * Private networks between a user's VMs (issue 38). A network owns a /24 of virtual addresses
 * (`10.250.<n>.0/24`, one per network of a user); a member VM holds the next free address of it (from .2) while
 * it has not ended, and keeps it while paused. Members reach each other over TCP at those addresses and at
 * `<vm name>.<network>.internal` / `<vm id>.<network>.internal`, which each member's /etc/hosts lists (a
 * convenience only: what decides is the address, mapped through the store).
 *
 * Nothing the guest chooses decides unchecked: the firewall recognises the source VM by its hypervisor's cgroup
 * (the `NetworkRelayPort`, `net/private-network/`), the relay learns the dialed address from the kernel, and
 * `connect` maps that address through the store to a member of a network the source VM is itself a member of,
 * of the same user, before it opens the target's agent tunnel (the preview proxy's path, which works across the
 * nodes of a cluster). Everything else to 10.250.0.0/16 is rejected by the host guard, as all of 10.0.0.0/8 is.
 *
 * A network with members that have not ended cannot be deleted (409): they leave first (`DELETE …/members/{vm_id}`)
 * or end. Joining or leaving is recorded for the session too, so a session's next VMs join the same networks.
 */
import { randomBytes } from 'node:crypto';
import { Readable, type Duplex } from 'node:stream';
import type { Principal } from './authenticator.ts';
import { BackgroundTimers, type BackgroundFailures } from './background-timers.ts';
import type { Clock } from './clock.ts';
import { AppError, notFound } from './errors.ts';
import { recordEvent, type EventNotifier } from './events.ts';
import { lockUser } from './user-lock.ts';
import type { EgressTarget, GuestAgent, VmEngine } from './vm-engine.ts';
import type { VmService } from './vms/index.ts';
import type { Vm } from '../model.ts';
import { type Database, type Executor, isUniqueViolation } from '../store/database.ts';
import {
  addSessionNetwork,
  deleteNetworkMember,
  deleteNetworkRow,
  findMemberByAddress,
  findNetwork,
  findNetworkByName,
  hasMemberRow,
  insertNetwork,
  insertNetworkMember,
  listNetworkMembers,
  listNetworks,
  networkCidrs,
  networksOfVm,
  pruneEndedMembers,
  removeSessionNetwork,
  sessionNetworkIds,
  takenAddresses,
  vmsOnNetworks,
  type Network,
  type NetworkMember,
} from '../store/networks-store.ts';
import { findVm } from '../store/vms-store.ts';

export type { Network, NetworkMember };

/** Networks a user may have: one /24 each out of 10.250.0.0/16. */
export const MAX_NETWORKS_PER_USER = 256;
/** Members of one network at once: .2 to .254 of its /24 (.1 is kept for a gateway, .0 and .255 are not hosts). */
export const MAX_MEMBERS_PER_NETWORK = 253;
/** Networks' names: a DNS label, since members are named `<vm>.<network>.internal`. */
export const NETWORK_NAME_PATTERN = '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$';

/** The markers of the block sandboxd keeps in each member's /etc/hosts. */
export const HOSTS_BEGIN = '# BEGIN sandboxd private networks (managed by sandboxd: edits inside are replaced)';
export const HOSTS_END = '# END sandboxd private networks';

/** What relays member VMs' connections on this node (the host firewall and the relay's listeners). */
export interface NetworkRelayPort {
  /** Relays the VM's TCP to `cidrs` from now on (replacing its earlier ones); no CIDRs: stops. */
  attach(vmId: string, target: EgressTarget, cidrs: string[]): Promise<void>;
  detach(vmId: string): Promise<void>;
  /** VMs whose connections are relayed now. */
  vmIds(): string[];
  /** Removes rules an earlier process of this node left. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

/** A network with its members. */
export interface NetworkWithMembers {
  network: Network;
  members: NetworkMember[];
}

export interface NetworkOptions {
  /** How often relayed VMs are compared with the live ones (ended or paused VMs leave the relay). */
  reconcileIntervalMs: number;
  failures: BackgroundFailures;
}

/** How long a VM may be starting with its relay attached before the reconcile pass takes it for gone (as egress). */
const STARTING_GRACE_MS = 10 * 60_000;

function newNetworkId(): string {
  return `net-${randomBytes(10).toString('hex')}`;
}

/** The host name label of a VM's name (null: it has none usable). */
export function hostLabel(name: string | null): string | null {
  if (!name) return null;
  const label = name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63);
  return label || null;
}

/** The names a member has on its network. */
export function memberHostnames(member: Pick<NetworkMember, 'vmId' | 'vmName'>, network: Pick<Network, 'name'>): string[] {
  const label = hostLabel(member.vmName);
  return [...(label && label !== member.vmId ? [`${label}.${network.name}.internal`] : []), `${member.vmId}.${network.name}.internal`];
}

/** `/etc/hosts` with its sandboxd block replaced by `lines` (removed when there are none). */
export function withHostsBlock(hosts: string, lines: string[]): string {
  const begin = hosts.indexOf(HOSTS_BEGIN);
  const end = hosts.indexOf(HOSTS_END);
  let rest = hosts;
  if (begin >= 0 && end > begin) rest = hosts.slice(0, begin) + hosts.slice(end + HOSTS_END.length).replace(/^\n/, '');
  if (rest.length && !rest.endsWith('\n')) rest += '\n';
  return lines.length ? `${rest}${HOSTS_BEGIN}\n${lines.join('\n')}\n${HOSTS_END}\n` : rest;
}

function inCidr(address: string, cidr: string): boolean {
  const prefix = cidr.replace(/0\/24$/, '');
  return address.startsWith(prefix) && /^\d{1,3}$/.test(address.slice(prefix.length));
}

export class NetworkService {
  private readonly timers: BackgroundTimers;
  /** Hosts file writes one at a time per VM (two changes in a row must not interleave their read and write). */
  private readonly hostsWrites = new Map<string, Promise<void>>();
  private reconciling: Promise<void> | null = null;
  /** VMs attached by `beforeRun` that are not live in the engine yet, by when: the reconcile pass leaves them be. */
  private readonly starting = new Map<string, number>();

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly notifier: EventNotifier,
    private readonly vms: VmService,
    private readonly engine: VmEngine,
    private readonly relay: NetworkRelayPort | null,
    private readonly options: NetworkOptions,
  ) {
    this.timers = new BackgroundTimers(options.failures);
  }

  /** Clears what an earlier process left and starts following VMs that end or pause. */
  async start(): Promise<void> {
    if (!this.relay) return;
    await this.relay.reset();
    this.timers.every('network_reconcile', this.options.reconcileIntervalMs, () => this.reconcile());
  }

  async stop(): Promise<void> {
    this.timers.clear();
    await this.relay?.close();
  }

  /** The relay, or 503 where this server has none. */
  private requireRelay(): NetworkRelayPort {
    if (!this.relay) throw new AppError('SERVICE_UNAVAILABLE', 'private networks need root, nftables and cgroup v2 on this server');
    return this.relay;
  }

  // ---- networks ----

  async create(principal: Principal, name: string): Promise<NetworkWithMembers> {
    this.requireRelay();
    if (!new RegExp(NETWORK_NAME_PATTERN).test(name))
      throw new AppError('BAD_REQUEST', 'a network name is a DNS label: a-z, 0-9 and "-", at most 63, not starting or ending with "-"');
    try {
      const network = await this.database.db.transaction().execute(async (trx) => {
        await lockUser(trx, this.database.dialect, principal.userId);
        const used = new Set(await networkCidrs(trx, principal.userId));
        let cidr: string | undefined;
        for (let n = 0; n < MAX_NETWORKS_PER_USER && !cidr; n++) if (!used.has(`10.250.${n}.0/24`)) cidr = `10.250.${n}.0/24`;
        if (!cidr) throw new AppError('CONFLICT', `you have ${MAX_NETWORKS_PER_USER} networks, the most there can be: delete one first`);
        const network: Network = { id: newNetworkId(), userId: principal.userId, name, cidr, createdAt: this.clock.now().toISOString() };
        await insertNetwork(trx, network);
        await recordEvent(trx, this.clock, {
          type: 'network.created',
          userId: principal.userId,
          subjectId: network.id,
          data: { network_id: network.id, name, cidr },
        });
        return network;
      });
      this.notifier.committed();
      return { network, members: [] };
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('CONFLICT', `you have a network named ${name}`);
      throw error;
    }
  }

  async list(principal: Principal): Promise<NetworkWithMembers[]> {
    const networks = await listNetworks(this.database.db, principal.userId);
    return Promise.all(networks.map(async (network) => ({ network, members: await listNetworkMembers(this.database.db, network.id) })));
  }

  /** One of the caller's networks by id or name (404 for anyone else's). */
  async getOwned(principal: Principal, idOrName: string): Promise<Network> {
    const db = this.database.db;
    // By id first; an id of someone else's network is no match (a name of the caller's may look like an id).
    const byId = await findNetwork(db, idOrName);
    const network = byId?.userId === principal.userId ? byId : await findNetworkByName(db, principal.userId, idOrName);
    if (!network) throw notFound(`network ${idOrName}`);
    return network;
  }

  async get(principal: Principal, idOrName: string): Promise<NetworkWithMembers> {
    const network = await this.getOwned(principal, idOrName);
    return { network, members: await listNetworkMembers(this.database.db, network.id) };
  }

  /** Deletes a network without members (409 while a VM that has not ended is on it). */
  async delete(principal: Principal, idOrName: string): Promise<void> {
    const network = await this.getOwned(principal, idOrName);
    await this.database.db.transaction().execute(async (trx) => {
      await lockUser(trx, this.database.dialect, principal.userId);
      const members = await listNetworkMembers(trx, network.id);
      if (members.length)
        throw new AppError('CONFLICT', `network ${network.name} has ${members.length} member(s) (${members.map((m) => m.vmId).join(', ')}): remove them first`);
      await deleteNetworkRow(trx, network.id);
      await recordEvent(trx, this.clock, {
        type: 'network.deleted',
        userId: principal.userId,
        subjectId: network.id,
        data: { network_id: network.id, name: network.name },
      });
    });
    this.notifier.committed();
  }

  // ---- membership ----

  /** The caller's networks by name or id (404 for one that is not the caller's): check them before anything is made. */
  async resolve(principal: Principal, networks: string[]): Promise<Network[]> {
    if (networks.length) this.requireRelay();
    return Promise.all([...new Set(networks)].map((name) => this.getOwned(principal, name)));
  }

  /** Makes `networks` (from `resolve`) the session's: its VMs join them when they start (`networks` of POST /v1/vms and /v1/sessions). */
  async attachToSession(sessionId: string, networks: Network[]): Promise<void> {
    for (const network of networks) await addSessionNetwork(this.database.db, sessionId, network.id);
  }

  /** Adds a running or paused VM of the caller's to a network (and its session, whose next VMs join too). */
  async join(principal: Principal, idOrName: string, vmId: string): Promise<NetworkMember> {
    this.requireRelay();
    const network = await this.getOwned(principal, idOrName);
    const vm = await this.vms.getOwned(principal, vmId);
    if (vm.status === 'killed') throw new AppError('VM_GONE', `VM ${vm.id} has ended: only a VM that runs or is paused joins a network`);
    const member = await this.addMember(network, vm);
    if (vm.sessionId) await addSessionNetwork(this.database.db, vm.sessionId, network.id);
    await this.applyRules(vm.id);
    await this.refreshHostsOf([network.id]);
    return member;
  }

  /** Removes a VM from a network (and from its session's networks). 404 when it is not a member. */
  async leave(principal: Principal, idOrName: string, vmId: string): Promise<void> {
    const network = await this.getOwned(principal, idOrName);
    const vm = await this.vms.getOwned(principal, vmId);
    const deleted = await this.database.db.transaction().execute(async (trx) => {
      if (!(await deleteNetworkMember(trx, network.id, vm.id))) return false;
      await recordEvent(trx, this.clock, {
        type: 'network.member_left',
        userId: network.userId,
        subjectId: network.id,
        data: { network_id: network.id, vm_id: vm.id, reason: 'removed' },
      });
      return true;
    });
    if (!deleted) throw notFound(`VM ${vm.id} on network ${network.name}`);
    this.notifier.committed();
    if (vm.sessionId) await removeSessionNetwork(this.database.db, vm.sessionId, network.id);
    await this.applyRules(vm.id);
    await Promise.all([this.refreshHostsOf([network.id]), this.writeHosts(vm.id)]);
  }

  private async addMember(network: Network, vm: Vm): Promise<NetworkMember> {
    const joinedAt = this.clock.now().toISOString();
    const address = await this.database.db.transaction().execute(async (trx) => {
      await lockUser(trx, this.database.dialect, network.userId);
      if (await hasMemberRow(trx, network.id, vm.id)) return null;
      await pruneEndedMembers(trx, network.id);
      const taken = new Set(await takenAddresses(trx, network.id));
      const base = network.cidr.replace(/0\/24$/, '');
      let address: string | undefined;
      for (let host = 2; host <= 254 && !address; host++) if (!taken.has(`${base}${host}`)) address = `${base}${host}`;
      if (!address) throw new AppError('CONFLICT', `network ${network.name} has ${MAX_MEMBERS_PER_NETWORK} members, the most it can have`);
      await insertNetworkMember(trx, { networkId: network.id, vmId: vm.id, address, joinedAt });
      await recordEvent(trx, this.clock, {
        type: 'network.member_joined',
        userId: network.userId,
        subjectId: network.id,
        data: { network_id: network.id, vm_id: vm.id, address },
      });
      return address;
    });
    if (address) this.notifier.committed();
    const member = (await listNetworkMembers(this.database.db, network.id)).find((m) => m.vmId === vm.id);
    if (!member) throw new AppError('VM_GONE', `VM ${vm.id} ended while it joined network ${network.name}`);
    return member;
  }

  // ---- the VM lifecycle (core/vms/readiness.ts) ----

  /**
   * Before a new or resumed VM runs: a new VM joins its session's networks; either gets its relay rules (the
   * hypervisor's cgroup is `target`). A failure fails the start (a member must not run without its network).
   */
  async beforeRun(vm: Vm, kind: 'new' | 'resumed', target: EgressTarget | null): Promise<void> {
    if (kind === 'new' && vm.sessionId) {
      const ids = await sessionNetworkIds(this.database.db, vm.sessionId);
      for (const id of ids) {
        const network = await findNetwork(this.database.db, id);
        if (network && network.userId === vm.userId) await this.addMember(network, vm);
      }
    }
    const networks = await networksOfVm(this.database.db, vm.id);
    if (networks.length === 0) return;
    this.starting.set(vm.id, Date.now());
    if (!target) throw new AppError('SERVICE_UNAVAILABLE', `VM ${vm.id} cannot join its networks: its hypervisor has no cgroup v2 the firewall can match`);
    await this.requireRelay().attach(
      vm.id,
      target,
      networks.map(({ network }) => network.cidr),
    );
  }

  /** A start failed after `beforeRun`: its relay goes (its member rows go with the ended VM). */
  startFailed(vmId: string): void {
    this.starting.delete(vmId);
    if (!this.engine.liveVmIds().includes(vmId)) void this.relay?.detach(vmId).catch(() => undefined);
  }

  /**
   * After a new VM started or a paused one resumed (before its caller gets it): its hosts file, through `agent` (its
   * record may not say `active` yet), and those of its networks' other members.
   */
  async ready(vm: Vm, agent: GuestAgent | null = null): Promise<void> {
    this.starting.delete(vm.id);
    const networks = await networksOfVm(this.database.db, vm.id);
    if (networks.length === 0) return;
    await Promise.all([
      this.writeHosts(vm.id, agent ?? undefined),
      this.refreshHostsOf(
        networks.map(({ network }) => network.id),
        vm.id,
      ),
    ]);
  }

  /** The relay rules of a VM of this node after its networks changed (nothing when it does not run here). */
  private async applyRules(vmId: string): Promise<void> {
    const relay = this.requireRelay();
    const target = await this.engine.egressTarget(vmId);
    if (!target) return; // paused, or on another node: its rules come with its next start here
    const networks = await networksOfVm(this.database.db, vmId);
    await relay.attach(
      vmId,
      target,
      networks.map(({ network }) => network.cidr),
    );
  }

  /**
   * VMs that ended or paused leave the relay; an ended one leaves its networks (`network.member_left`, reason
   * `vm_ended`) and the other members' hosts files lose it.
   */
  private reconcile(): Promise<void> {
    this.reconciling ??= (async () => {
      if (!this.relay) return;
      const live = new Set(this.engine.liveVmIds());
      // Members running without their rules: VMs an earlier process left, re-adopted by the engine.
      const relayed = new Set(this.relay.vmIds());
      for (const vmId of await vmsOnNetworks(
        this.database.db,
        [...live].filter((id) => !relayed.has(id)),
      ))
        await this.applyRules(vmId);
      for (const [vmId, sinceMs] of this.starting) if (Date.now() - sinceMs > STARTING_GRACE_MS) this.starting.delete(vmId);
      for (const vmId of this.relay.vmIds()) {
        if (live.has(vmId) || this.starting.has(vmId)) continue;
        await this.relay.detach(vmId);
        const vm = await findVm(this.database.db, vmId);
        if (vm && vm.status !== 'killed') continue; // paused (or starting again elsewhere): it keeps its addresses
        const networks = await networksOfVm(this.database.db, vmId);
        if (networks.length === 0) continue;
        await this.database.db.transaction().execute(async (trx) => {
          for (const { network } of networks) {
            if (!(await deleteNetworkMember(trx, network.id, vmId))) continue;
            await recordEvent(trx, this.clock, {
              type: 'network.member_left',
              userId: network.userId,
              subjectId: network.id,
              data: { network_id: network.id, vm_id: vmId, reason: 'vm_ended' },
            });
          }
        });
        this.notifier.committed();
        await this.refreshHostsOf(networks.map(({ network }) => network.id));
      }
    })().finally(() => (this.reconciling = null));
    return this.reconciling;
  }

  // ---- names ----

  /** Rewrites the hosts block of every running member of these networks. */
  private async refreshHostsOf(networkIds: string[], except?: string): Promise<void> {
    const vmIds = new Set<string>();
    for (const id of networkIds) {
      for (const member of await listNetworkMembers(this.database.db, id)) if (member.vmStatus === 'active' && member.vmId !== except) vmIds.add(member.vmId);
    }
    await Promise.all([...vmIds].map((vmId) => this.writeHosts(vmId)));
  }

  /** One VM's hosts block: every member of each of its networks. Best effort: a VM that went away is skipped. */
  private writeHosts(vmId: string, liveAgent?: GuestAgent): Promise<void> {
    const previous = this.hostsWrites.get(vmId) ?? Promise.resolve();
    const next = previous
      .then(async () => {
        let agent = liveAgent ?? null;
        if (!agent) {
          const vm = await findVm(this.database.db, vmId);
          if (!vm || vm.status !== 'active') return;
          agent = this.vms.agentOf(vm);
          if (!agent) return;
        }
        const lines: string[] = [];
        for (const { network } of await networksOfVm(this.database.db, vmId)) {
          for (const member of await listNetworkMembers(this.database.db, network.id))
            lines.push(`${member.address} ${memberHostnames(member, network).join(' ')}`);
        }
        await writeHostsBlock(agent, lines);
      })
      .catch(() => undefined)
      .finally(() => {
        if (this.hostsWrites.get(vmId) === next) this.hostsWrites.delete(vmId);
      });
    this.hostsWrites.set(vmId, next);
    return next;
  }

  // ---- the relay's decision ----

  /**
   * Opens the connection a member VM dialed (`address:port`, from the kernel, never from the guest's bytes):
   * `sourceVmId` must be a running member of a network whose /24 holds `address`, and `address` a running member
   * of that same network of the same user. Anything else is refused (the relay resets the guest's connection).
   */
  async connect(sourceVmId: string, address: string, port: number): Promise<Duplex> {
    const db = this.database.db;
    const source = await findVm(db, sourceVmId);
    if (!source || source.status === 'killed') throw new AppError('FORBIDDEN', `VM ${sourceVmId} is not running`);
    const networks = await networksOfVm(db, sourceVmId);
    const on = networks.find(({ network }) => network.userId === source.userId && inCidr(address, network.cidr));
    if (!on) throw new AppError('FORBIDDEN', `${address} is on none of VM ${sourceVmId}'s networks`);
    const member = await findMemberByAddress(db, on.network.id, address);
    if (!member) throw new AppError('NOT_FOUND', `no member holds ${address} on network ${on.network.name}`);
    const target = await findVm(db, member.vmId);
    if (!target || target.userId !== on.network.userId || target.status !== 'active')
      throw new AppError('VM_GONE', `VM ${member.vmId} at ${address} is not running`);
    const agent = this.vms.agentOf(target);
    if (!agent) throw new AppError('VM_GONE', `VM ${member.vmId} at ${address} is not reachable`);
    return agent.openTunnel(port);
  }

  /** The member records of a VM (its networks and addresses): for VM records and tests. */
  async networksOf(vmId: string, db: Executor = this.database.db): Promise<{ network: Network; address: string }[]> {
    return networksOfVm(db, vmId);
  }
}

/** The most of a guest's /etc/hosts the host reads: the guest writes that file, so its size is the guest's choice. */
const HOSTS_FILE_MAX_BYTES = 1024 * 1024;

/** Replaces the sandboxd block of the guest's /etc/hosts (left as it is when the guest made it larger than the cap). */
async function writeHostsBlock(agent: GuestAgent, lines: string[]): Promise<void> {
  const { stream } = await agent.readFile('/etc/hosts');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > HOSTS_FILE_MAX_BYTES) {
      (stream as { destroy?: () => void }).destroy?.();
      throw new Error(`the guest's /etc/hosts is larger than ${HOSTS_FILE_MAX_BYTES} bytes: its names are not written`);
    }
    chunks.push(chunk as Buffer);
  }
  const current = Buffer.concat(chunks).toString('utf8');
  const next = withHostsBlock(current, lines);
  if (next === current) return;
  await agent.writeFile('/etc/hosts', Readable.from([Buffer.from(next)]), { mode: 0o644 });
}
