/**
 * Settings of this node in a cluster: its name, its internal listener and how the others reach it, the shared
 * secret, heartbeats and capacity.
 */
import os from 'node:os';
import { booleanFlag, integer, listenAddress, type Setting, type SettingValues } from './kit.ts';

/** The settings of the cluster block, by name (each name is unique across the blocks). */
export const clusterSettings = {
  nodeId: {
    env: 'SANDBOXD_NODE_ID',
    description: 'Name of this node (recorded with each VM it runs); default the host name',
    parse: (raw: string) => {
      if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/.test(raw)) throw new Error('use 1-63 letters, digits, dots, dashes or underscores');
      return raw;
    },
    fallback: () => os.hostname(),
    defaultText: 'the host name',
  },
  internalListen: {
    env: 'SANDBOXD_INTERNAL_LISTEN',
    description:
      "HOST:PORT of the internal listener, the only one that serves the cluster's internal routes (/internal/*, each request signed with the cluster secret for this node), or `off` (single node only); default 127.0.0.1 on the public port + 2. In a cluster, set this node's address on the private network",
    parse: listenAddress,
    fallback: () => '',
  },
  internalUrl: {
    env: 'SANDBOXD_INTERNAL_URL',
    description:
      "Base URL the other nodes of a cluster reach this node's internal listener at; default http://<SANDBOXD_INTERNAL_LISTEN> (set it when a proxy or another name stands in front)",
    parse: (raw: string) => new URL(raw).toString().replace(/\/$/, ''),
    fallback: () => '',
  },
  clusterSecret: {
    env: 'SANDBOXD_CLUSTER_SECRET',
    description: 'Key that signs requests between the nodes of a cluster (at least 32 characters); unset = generated once and shared through the store',
    parse: (raw: string) => {
      if (raw.length < 32) throw new Error('must be at least 32 characters');
      return raw;
    },
    fallback: () => null as string | null,
  },
  nodeHeartbeatSeconds: {
    env: 'SANDBOXD_NODE_HEARTBEAT_SECONDS',
    description: 'How often this node records its heartbeat and load in the store, and looks for dead nodes',
    parse: integer(1, 300),
    fallback: () => 5,
  },
  nodeDeadAfterSeconds: {
    env: 'SANDBOXD_NODE_DEAD_AFTER_SECONDS',
    description: 'A node whose last heartbeat is older than this is declared dead and its VMs recorded lost (more than twice the heartbeat interval)',
    parse: integer(2, 3600),
    fallback: () => 30,
  },
  nodeVcpus: {
    env: 'SANDBOXD_NODE_VCPUS',
    description: "vCPUs this node offers to VMs (placement capacity); default the host's CPUs",
    parse: integer(1, 4096),
    fallback: () => os.availableParallelism(),
    defaultText: "the host's CPU count",
  },
  nodeMemoryMb: {
    env: 'SANDBOXD_NODE_MEMORY_MB',
    description: "Memory this node offers to VMs, MiB (placement capacity); default the host's memory less 1 GiB",
    parse: integer(256, 16_777_216),
    fallback: () => Math.max(256, Math.floor(os.totalmem() / 1_048_576) - 1024),
    defaultText: "the host's memory less 1 GiB",
  },
  nodeVmSlots: {
    env: 'SANDBOXD_NODE_VM_SLOTS',
    description: 'Most VMs this node runs at once (placement capacity); a full node sends new VMs to another live node',
    parse: integer(1, 100_000),
    fallback: () => 256,
  },
  strictKillOwnership: {
    env: 'SANDBOXD_STRICT_KILL_OWNERSHIP',
    description:
      "A kill that a node's queue worker picks up for a VM another node owns is re-dispatched once to the owner's queue (else it is dropped as stale)",
    parse: booleanFlag,
    fallback: () => false,
  },
} satisfies Record<string, Setting<unknown>>;

/** The cluster block of the configuration. */
export type ClusterConfig = SettingValues<typeof clusterSettings>;
