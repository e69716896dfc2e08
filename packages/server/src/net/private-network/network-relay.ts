/**
 * The network relay of private networks on one node: for each member VM that runs here, a TCP listener on the
 * host's loopback that the firewall (`ruleset.ts`) redirects the VM's connections to its networks' addresses to.
 * The listener a connection arrives on names the source VM (only that VM's cgroup rule leads there); the kernel's
 * connection tracking names the address and port the guest dialed (`original-destination.ts`). `connect` (the
 * core: membership, ownership, the target's agent tunnel) decides and opens the other end; the relay pipes bytes.
 * Nothing the guest sends is read by the relay.
 */
import net from 'node:net';
import { once } from 'node:events';
import type { Duplex } from 'node:stream';
import { applyRelayTable, deleteRelayTable, type RelayRule } from './ruleset.ts';
import { originalDestination } from './original-destination.ts';

export interface NetworkRelayOptions {
  /** This node's table (`privateNetworkTableName(nodeId)`). */
  table: string;
  /** Opens the connection from `sourceVmId` to `address:port` on its network, or rejects (the relay then resets the guest's). */
  connect(sourceVmId: string, address: string, port: number): Promise<Duplex>;
  nftBinary?: string;
  /** Where refused or failed connections are told (never thrown). */
  onRefused?(sourceVmId: string, destination: string, error: Error): void;
}

interface Member {
  server: net.Server;
  port: number;
  cgroupPath: string;
  level: number;
  cidrs: string[];
  sockets: Set<net.Socket>;
}

export class NetworkRelay {
  private readonly members = new Map<string, Member>();
  /** nft transactions one at a time (each replaces the whole chain). */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: NetworkRelayOptions) {}

  /** VMs of this node whose connections are relayed now. */
  vmIds(): string[] {
    return [...this.members.keys()];
  }

  /** Relays the VM's TCP to `cidrs` from now on (replacing its earlier CIDRs); no CIDRs: as `detach`. */
  async attach(vmId: string, target: { cgroupPath: string; level: number }, cidrs: string[]): Promise<void> {
    if (cidrs.length === 0) return this.detach(vmId);
    let member = this.members.get(vmId);
    if (!member) {
      const sockets = new Set<net.Socket>();
      const created: Member = { server: net.createServer((socket) => void this.relay(vmId, created, socket)), port: 0, ...target, cidrs, sockets };
      // Registered before the first await: a second attach of the same VM meanwhile finds it (one listener per VM).
      this.members.set(vmId, created);
      created.server.listen(0, '127.0.0.1');
      try {
        await once(created.server, 'listening');
      } catch (error) {
        if (this.members.get(vmId) === created) this.members.delete(vmId);
        throw error;
      }
      created.port = (created.server.address() as net.AddressInfo).port;
      member = created;
    } else if (!member.server.listening) {
      await once(member.server, 'listening');
    }
    member.cgroupPath = target.cgroupPath;
    member.level = target.level;
    member.cidrs = [...new Set(cidrs)].sort();
    await this.sync();
  }

  /** Stops relaying the VM's connections (it ended, or left its last network); its open connections close. */
  async detach(vmId: string): Promise<void> {
    const member = this.members.get(vmId);
    if (!member) return;
    this.members.delete(vmId);
    await this.sync();
    member.server.close();
    for (const socket of member.sockets) socket.destroy();
  }

  /** Closes every listener and removes the table. */
  async close(): Promise<void> {
    const members = [...this.members.values()];
    this.members.clear();
    await this.enqueue(() => deleteRelayTable(this.options.table, this.options.nftBinary));
    for (const member of members) {
      member.server.close();
      for (const socket of member.sockets) socket.destroy();
    }
  }

  /** Removes what an earlier process left (its listeners are gone: its rules would lead nowhere). */
  async reset(): Promise<void> {
    await this.enqueue(() => deleteRelayTable(this.options.table, this.options.nftBinary));
    if (this.members.size) await this.sync();
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    const run = this.queue.then(step);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private sync(): Promise<void> {
    return this.enqueue(async () => {
      // A listener still being opened has its rule in the sync its attach runs next.
      const rules: RelayRule[] = [...this.members.values()]
        .filter((m) => m.port > 0)
        .map((m) => ({ cgroupPath: m.cgroupPath, level: m.level, cidrs: m.cidrs, port: m.port }));
      if (rules.length === 0) await deleteRelayTable(this.options.table, this.options.nftBinary);
      else await applyRelayTable(this.options.table, rules, this.options.nftBinary);
    });
  }

  private async relay(vmId: string, member: Member, socket: net.Socket): Promise<void> {
    member.sockets.add(socket);
    socket.on('close', () => member.sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.pause();
    let destination = 'unknown';
    try {
      const original = await originalDestination({ address: socket.remoteAddress ?? '', port: socket.remotePort ?? 0 }, member.port);
      if (!original) throw new Error('no redirected connection of this VM matches (connection tracking has no entry)');
      destination = `${original.address}:${original.port}`;
      const upstream = await this.options.connect(vmId, original.address, original.port);
      if (socket.destroyed) {
        upstream.destroy();
        return;
      }
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
      upstream.on('close', () => socket.destroy());
      socket.on('close', () => upstream.destroy());
      socket.setNoDelay(true);
      socket.pipe(upstream);
      upstream.pipe(socket);
      socket.resume();
    } catch (error) {
      this.options.onRefused?.(vmId, destination, error as Error);
      socket.resetAndDestroy();
    }
  }
}
