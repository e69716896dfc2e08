/**
 * Settings of the VM engine: caches and directories, the accelerator and network, the warm pool, the host's CPU
 * and disk floors, and what a session's VM gets by default.
 */
import os from 'node:os';
import path from 'node:path';
import { booleanFlag, decimal, integer, oneOf, text, type Setting, type SettingValues } from './kit.ts';

/** The settings of the vm block, by name (each name is unique across the blocks). */
export const vmSettings = {
  cacheDir: {
    env: 'SANDBOXD_CACHE_DIR',
    description: 'Cache shared by every clone on the machine (guest images, snapshots)',
    parse: (raw: string) => path.resolve(text(raw)),
    fallback: () => path.join(os.homedir(), '.cache', 'sandboxd'),
    defaultText: '`~/.cache/sandboxd`',
  },
  cacheRetentionDays: {
    env: 'SANDBOXD_CACHE_RETENTION_DAYS',
    description:
      'Guest images and snapshot sets that no sandboxd on the machine used for this many days are removed when a server starts (each server marks what it uses at start and hourly); 0 keeps everything',
    parse: integer(0, 3650),
    fallback: () => 7,
  },
  snapshotDir: {
    env: 'SANDBOXD_SNAPSHOT_DIR',
    description:
      'Where VM snapshots (one per vCPU variant, keyed by image) are kept, shared by every clone on the machine; the VM user must be able to traverse it',
    parse: (raw: string) => path.resolve(text(raw)),
    fallback: () => '/var/lib/sandboxd/snapshots',
  },
  vmSnapshotDir: {
    env: 'SANDBOXD_VM_SNAPSHOT_DIR',
    description:
      'Where this server keeps the snapshots users take of their VMs and the memory and disks of paused VMs (on disk, not tmpfs; the VM user must be able to traverse it); default /var/lib/sandboxd/vm-snapshots/<hash of the data directory>',
    parse: (raw: string) => path.resolve(text(raw)),
    fallback: () => '',
  },
  runDir: {
    env: 'SANDBOXD_RUN_DIR',
    description:
      'Directory for per-VM run directories (sockets, disk overlays, console logs); must be traversable by the VM user; default /var/lib/sandboxd/run/<hash of the data directory>',
    parse: (raw: string) => path.resolve(text(raw)),
    fallback: () => '',
  },
  accel: {
    env: 'SANDBOXD_ACCEL',
    description: 'VM accelerator: auto (KVM when a test boot works, else TCG with a warning), kvm or tcg',
    parse: oneOf<'auto' | 'kvm' | 'tcg'>('auto', 'kvm', 'tcg'),
    fallback: (): 'auto' | 'kvm' | 'tcg' => 'auto',
  },
  vmNetwork: {
    env: 'SANDBOXD_VM_NETWORK',
    description: 'Guest network: user (outbound internet through QEMU user-mode networking; host addresses blocked) or none',
    parse: oneOf<'user' | 'none'>('user', 'none'),
    fallback: (): 'user' | 'none' => 'user',
  },
  vmNetworkUnguarded: {
    env: 'SANDBOXD_VM_NETWORK_UNGUARDED',
    description:
      "Start VMs with user networking even when the host's network guard is not active (it needs root and nftables): their guests then reach the host's loopback (this API, the database) and private networks. Default false: such VMs are refused (NETWORK_GUARD_INACTIVE)",
    parse: booleanFlag,
    fallback: () => false,
  },
  poolSize: {
    env: 'SANDBOXD_POOL_SIZE',
    description: 'Restored, idle VMs kept ready per warm vCPU variant (0 disables the warm pool)',
    parse: integer(0, 64),
    fallback: () => 1,
  },
  poolMax: {
    env: 'SANDBOXD_POOL_MAX',
    description:
      'The most idle VMs the warm pool grows to per variant after a burst (SANDBOXD_POOL_SIZE is its floor): it keeps as many as were taken within any minute of the last 15, refilled only while the host is idle, and lets them go once the burst has aged out',
    parse: integer(0, 256),
    fallback: () => 16,
  },
  minFreeMemoryMb: {
    env: 'SANDBOXD_MIN_FREE_MEMORY_MB',
    description:
      'Memory (MiB) the host must keep available (MemAvailable): below it new VMs are refused with 503 HOST_MEMORY_LOW and the warm pool is not refilled; 0 disables the check',
    parse: integer(0, 64 * 1024 * 1024),
    fallback: () => 1024,
  },
  maxConcurrentRestores: {
    env: 'SANDBOXD_MAX_CONCURRENT_RESTORES',
    description:
      'VM restores in progress at once (0 = no limit); more wait their turn. Default: the host CPU count, since under TCG a restore is CPU-bound and a crowd of them makes each slower',
    parse: integer(0, 1024),
    fallback: () => os.availableParallelism(),
    defaultText: "the host's CPU count",
  },
  forkConcurrency: {
    env: 'SANDBOXD_FORK_CONCURRENCY',
    description:
      "Clones one fork request (POST /v1/vms/{vm_id}/clone, /v1/snapshots/{snapshot}/clone) starts at once; the rest wait their turn. Default: twice the host's CPU count, enough to keep every restore slot busy while earlier clones finish their set-up, few enough that a failure stops the fork after at most this many more starts",
    parse: integer(1, 256),
    fallback: () => 2 * os.availableParallelism(),
    defaultText: "twice the host's CPU count",
  },
  minFreeDiskMb: {
    env: 'SANDBOXD_MIN_FREE_DISK_MB',
    description:
      "Free space (MiB) the filesystem of the run directory must keep: below it new VMs are refused with 507 HOST_STORAGE_LOW (and the warm pool is not refilled) until space is freed; VMs already running may still grow to their plan's diskMb",
    parse: integer(0, 64 * 1024 * 1024),
    fallback: () => 2048,
  },
  hostCpuReserve: {
    env: 'SANDBOXD_HOST_CPU_RESERVE',
    description:
      'CPUs no single VM may take from the host: each VM is capped at min(its vCPUs, host CPUs minus this), so a guest busy on all its vCPUs leaves the server and the other VMs this much; 0 caps a VM at its vCPUs only',
    parse: decimal(0, 1024),
    fallback: () => 0.5,
  },
  vmCpuWeight: {
    env: 'SANDBOXD_VM_CPU_WEIGHT',
    description:
      'CPU weight of all VMs together (their parent cgroup) against the processes beside it, 1-10000 (cgroup v2 cpu.weight; v1 cpu.shares = weight x 10.24); 100 is the kernel default, lower lets the server and other host processes win when the CPU is contended',
    parse: integer(1, 10_000),
    fallback: () => 100,
  },
  tcgCacheMb: {
    env: 'SANDBOXD_TCG_CACHE_MB',
    description:
      "TCG's translated-code cache per VM, MiB (QEMU's tb-size; no effect under KVM). It fills as the guest's code is translated and is most of an idle TCG VM's own host memory; a smaller cache is flushed and retranslated more often (more CPU for busy guests)",
    parse: integer(16, 2048),
    fallback: () => 256,
  },
  warmVcpus: {
    env: 'SANDBOXD_WARM_VCPUS',
    description: 'Comma-separated vCPU variants snapshotted and pooled at start (others are snapshotted on first use)',
    parse: (raw: string) => {
      const values = raw.split(',').map((v) => Number(v.trim()));
      if (values.some((v) => ![1, 2, 4, 6, 8].includes(v))) throw new Error('expected a list of 1, 2, 4, 6, 8');
      return values as (1 | 2 | 4 | 6 | 8)[];
    },
    fallback: (): (1 | 2 | 4 | 6 | 8)[] => [2],
  },
  keepVmsOnShutdown: {
    env: 'SANDBOXD_KEEP_VMS_ON_SHUTDOWN',
    description: 'Leave VMs running on a graceful shutdown, to re-adopt them at the next start (after a crash they are always re-adopted)',
    parse: booleanFlag,
    fallback: () => false,
  },
  agentReconnectSeconds: {
    env: 'SANDBOXD_AGENT_RECONNECT_SECONDS',
    description:
      "How long the server keeps trying to reconnect to a live VM's agent after the link dropped; a VM whose agent is not back by then is killed and recorded with end_reason error (end_detail agent_lost)",
    parse: integer(1, 3600),
    fallback: () => 30,
  },
  defaultVmLifetimeSeconds: {
    env: 'SANDBOXD_DEFAULT_VM_LIFETIME_SECONDS',
    description: 'VM lifetime of a session that does not ask for vm_lifetime_seconds (also of the session an execute without session_id creates)',
    parse: integer(20, 2_592_000),
    fallback: () => 300,
  },
  autoPauseCheckSeconds: {
    env: 'SANDBOXD_AUTO_PAUSE_CHECK_SECONDS',
    description:
      'How often each node looks for its idle VMs to pause (those with auto_pause) and writes the activity it saw to the store; a VM is paused between auto_pause and auto_pause plus this many seconds after its last use',
    parse: integer(1, 300),
    fallback: () => 5,
  },
  pausedRetentionCheckSeconds: {
    env: 'SANDBOXD_PAUSED_RETENTION_CHECK_SECONDS',
    description: "How often each node looks for its paused VMs kept longer than their owner's plan allows (pausedRetentionSeconds) and deletes them",
    parse: integer(1, 86_400),
    fallback: () => 60,
  },
  defaultVcpus: {
    env: 'SANDBOXD_DEFAULT_VCPUS',
    description: 'vCPUs of a session that does not ask for vcpu_count: 1, 2, 4, 6 or 8; keep it among SANDBOXD_WARM_VCPUS so such sessions get pooled VMs',
    parse: (raw: string): 1 | 2 | 4 | 6 | 8 => {
      const value = Number(raw.trim());
      if (![1, 2, 4, 6, 8].includes(value)) throw new Error(`expected 1, 2, 4, 6 or 8, got "${raw}"`);
      return value as 1 | 2 | 4 | 6 | 8;
    },
    fallback: (): 1 | 2 | 4 | 6 | 8 => 2,
  },
  defaultMemoryMb: {
    env: 'SANDBOXD_DEFAULT_MEMORY_MB',
    description:
      'Guest memory of a session that does not ask for memory_mb; this size has snapshots of its own (no balloon work on restore) and is what the warm pool holds',
    parse: integer(128, 8192),
    fallback: () => 512,
  },
} satisfies Record<string, Setting<unknown>>;

/** The vm block of the configuration. */
export type VmConfig = SettingValues<typeof vmSettings>;
