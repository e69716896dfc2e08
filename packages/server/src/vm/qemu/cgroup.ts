/**
 * Per-VM resource limits with cgroups: one cgroup per VM limiting CPU (a bandwidth cap the driver derives from
 * the vCPU count and the host's reserve), memory (guest memory plus QEMU's overhead) and the number of tasks,
 * under a parent whose CPU weight the operator may set. cgroup v2 is used where the host runs it (Debian 12's
 * default); hosts still on the v1 hierarchies get the same limits through the v1 files. Where neither works,
 * `detectCgroups` says why, and VMs run without limits (the caller reports it; nothing fails silently).
 */
import { access, mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** The limits of one VM. */
export interface CgroupLimits {
  /** CPU bandwidth, in CPUs (fractions allowed): the VM's threads together get at most this much CPU time. */
  cpuLimit: number;
  memoryMaxBytes: number;
  pidsMax: number;
}

/** Creates, fills and removes per-VM cgroups. */
export interface CgroupManager {
  /** How it works here, for the host report (e.g. "cgroup v2 under /sys/fs/cgroup/sandboxd"). */
  readonly detail: string;
  /** Creates the VM's cgroup(s) with `limits`; returns their directories (to record and remove later). */
  create(vmId: string, limits: CgroupLimits): Promise<string[]>;
  /** Moves a process (all its threads) into the VM's cgroup(s). */
  addProcess(paths: string[], pid: number): Promise<void>;
}

/** The period of CPU bandwidth control: quota = cpuLimit × period. */
const CPU_PERIOD_US = 100_000;

/** The CPU bandwidth quota of `cpuLimit` CPUs per period, µs (the kernel's minimum is 1 ms). */
export function cpuQuotaUs(cpuLimit: number): number {
  return Math.max(1000, Math.round(cpuLimit * CPU_PERIOD_US));
}

/** v2 `cpu.weight` (1–10000, default 100) as v1 `cpu.shares` (default 1024). */
function sharesOfWeight(weight: number): number {
  return Math.max(2, Math.round((weight * 1024) / 100));
}

/** Removes cgroup directories (deepest first); tolerates missing ones. Retries while the last task exits. */
export async function removeCgroups(paths: string[]): Promise<void> {
  for (const path of paths) {
    for (let attempt = 0; ; attempt++) {
      try {
        await rmdir(path);
        break;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') break;
        // EBUSY while the killed QEMU's threads are still being torn down.
        if (code !== 'EBUSY' || attempt >= 50) throw error;
        await sleep(20);
      }
    }
  }
}

/** cgroup v2: `<root>/<parent>/<vmId>` with cpu.max, memory.max, memory.swap.max, pids.max. */
class CgroupV2 implements CgroupManager {
  readonly detail: string;
  constructor(private readonly parentDir: string) {
    this.detail = `cgroup v2 under ${parentDir}`;
  }

  async create(vmId: string, limits: CgroupLimits): Promise<string[]> {
    const dir = join(this.parentDir, vmId);
    await mkdir(dir);
    try {
      await writeFile(join(dir, 'cpu.max'), `${cpuQuotaUs(limits.cpuLimit)} ${CPU_PERIOD_US}`);
      await writeFile(join(dir, 'memory.max'), String(limits.memoryMaxBytes));
      // Swapping guest RAM out would only make a VM slow instead of stopping it at its limit.
      await writeFile(join(dir, 'memory.swap.max'), '0').catch(() => undefined);
      await writeFile(join(dir, 'pids.max'), String(limits.pidsMax));
    } catch (error) {
      await removeCgroups([dir]);
      throw error;
    }
    return [dir];
  }

  async addProcess(paths: string[], pid: number): Promise<void> {
    for (const dir of paths) await writeFile(join(dir, 'cgroup.procs'), String(pid));
  }
}

/**
 * cgroup v1: one directory per controller hierarchy (cpu, memory, pids), plus one in the cgroup2 hierarchy of a
 * hybrid host when it has one (`unified`: no controllers, no limits), because the egress firewall matches a VM's
 * sockets by their cgroup v2 (`net/egress/cgroup-classifier.ts`).
 */
class CgroupV1 implements CgroupManager {
  readonly detail: string;
  constructor(private readonly parents: { cpu: string; memory: string; pids: string; unified: string | null }) {
    this.detail = `cgroup v1 under ${parents.cpu}, ${parents.memory}, ${parents.pids}${parents.unified ? ` (and ${parents.unified} for the egress firewall)` : ''}`;
  }

  async create(vmId: string, limits: CgroupLimits): Promise<string[]> {
    const cpu = join(this.parents.cpu, vmId);
    const memory = join(this.parents.memory, vmId);
    const pids = join(this.parents.pids, vmId);
    const created: string[] = [];
    try {
      for (const dir of [cpu, memory, pids, ...(this.parents.unified ? [join(this.parents.unified, vmId)] : [])]) {
        await mkdir(dir);
        created.push(dir);
      }
      await writeFile(join(cpu, 'cpu.cfs_period_us'), String(CPU_PERIOD_US));
      await writeFile(join(cpu, 'cpu.cfs_quota_us'), String(cpuQuotaUs(limits.cpuLimit)));
      await writeFile(join(memory, 'memory.limit_in_bytes'), String(limits.memoryMaxBytes));
      await writeFile(join(pids, 'pids.max'), String(limits.pidsMax));
    } catch (error) {
      await removeCgroups(created);
      throw error;
    }
    return created;
  }

  async addProcess(paths: string[], pid: number): Promise<void> {
    // v1 cgroup.procs moves every thread of the process, like v2.
    for (const dir of paths) await writeFile(join(dir, 'cgroup.procs'), String(pid));
  }
}

/** Result of {@link detectCgroups}. */
export type CgroupDetection = { manager: CgroupManager; reason?: undefined } | { manager: null; reason: string };

export interface DetectCgroupsOptions {
  /**
   * cgroup v2: the directory (relative to the cgroup2 mount) that holds one child per VM. Default
   * `sandboxd`. It must not contain processes itself (v2's no-internal-processes rule), so it is not the
   * server's own cgroup; with systemd, use a delegated subtree.
   * cgroup v1: relative to the server's own cgroup in each hierarchy. Default `sandboxd`, i.e. VMs are nested
   * under the server and stay inside whatever limits the server itself runs with.
   */
  parent?: string;
  /**
   * CPU weight of the parent against its siblings (v2 `cpu.weight`, 1–10000, 100 the kernel's default; on v1
   * written as `cpu.shares` = weight × 1024 / 100). Below the server's own group, the server wins when both
   * want the CPU. Undefined leaves the parent's weight as it is.
   */
  cpuWeight?: number;
}

/** Finds a usable cgroup hierarchy with the cpu, memory and pids controllers and prepares the parent. */
export async function detectCgroups(options: DetectCgroupsOptions = {}): Promise<CgroupDetection> {
  const parent = options.parent ?? 'sandboxd';
  if (parent.split('/').includes('..')) return { manager: null, reason: `invalid cgroup parent ${parent}` };
  const mounts = await readFile('/proc/self/mounts', 'utf8').catch(() => '');
  const entries = mounts
    .split('\n')
    .map((line) => line.split(' '))
    .filter((fields) => fields.length > 3);
  const v2 = entries.find(([, mountPoint, type]) => type === 'cgroup2' && mountPoint === '/sys/fs/cgroup');
  try {
    if (v2) return await prepareV2('/sys/fs/cgroup', parent, options.cpuWeight);
    // Prefer the host's own hierarchies over copies bind-mounted into chroots.
    const v1Mount = (controller: string) =>
      entries
        .filter(([, , type, opts]) => type === 'cgroup' && opts!.split(',').includes(controller))
        .map(([, mountPoint]) => mountPoint!)
        .sort((a, b) => Number(b.startsWith('/sys/fs/cgroup/')) - Number(a.startsWith('/sys/fs/cgroup/')))[0];
    const cpu = v1Mount('cpu');
    const memory = v1Mount('memory');
    const pids = v1Mount('pids');
    const unified = entries.find(([, mountPoint, type]) => type === 'cgroup2' && mountPoint!.startsWith('/sys/fs/cgroup/'))?.[1] ?? null;
    if (cpu && memory && pids) return await prepareV1({ cpu, memory, pids, unified }, parent, options.cpuWeight);
    return { manager: null, reason: 'no cgroup v2 at /sys/fs/cgroup and no cgroup v1 cpu, memory and pids hierarchies mounted' };
  } catch (error) {
    return { manager: null, reason: `cgroups are present but not usable: ${(error as Error).message}` };
  }
}

async function prepareV2(root: string, parent: string, cpuWeight: number | undefined): Promise<CgroupDetection> {
  const available = (await readFile(join(root, 'cgroup.controllers'), 'utf8')).trim().split(/\s+/);
  const missing = ['cpu', 'memory', 'pids'].filter((controller) => !available.includes(controller));
  if (missing.length) return { manager: null, reason: `cgroup v2 lacks the ${missing.join(', ')} controller(s) (available: ${available.join(' ') || 'none'})` };
  // Every ancestor of a VM's cgroup must delegate the controllers to its children.
  let dir = root;
  for (const part of parent.split('/').filter(Boolean)) {
    await writeFile(join(dir, 'cgroup.subtree_control'), '+cpu +memory +pids');
    dir = join(dir, part);
    await mkdir(dir, { recursive: true });
  }
  await writeFile(join(dir, 'cgroup.subtree_control'), '+cpu +memory +pids');
  if (cpuWeight !== undefined && dir !== root) await writeFile(join(dir, 'cpu.weight'), String(cpuWeight));
  return { manager: new CgroupV2(dir) };
}

async function prepareV1(
  mounts: { cpu: string; memory: string; pids: string; unified: string | null },
  parent: string,
  cpuWeight: number | undefined,
): Promise<CgroupDetection> {
  const own = await ownV1Cgroups();
  const resolve = (controller: 'cpu' | 'memory' | 'pids') => join(mounts[controller], own.get(controller) ?? '/', parent);
  // The server's own cgroup v2 is the `0::<path>` line (an empty controller list).
  let unified = mounts.unified ? join(mounts.unified, own.get('') ?? '/', parent) : null;
  const parents = { cpu: resolve('cpu'), memory: resolve('memory'), pids: resolve('pids') };
  for (const dir of Object.values(parents)) {
    await mkdir(dir, { recursive: true });
    await access(join(dir, 'cgroup.procs'));
  }
  // Without it only egress policies are lost (VMs stay open; the host report says so), so a failure is no reason to run without limits.
  if (unified)
    unified = await mkdir(unified, { recursive: true }).then(
      () => unified,
      () => null,
    );
  if (cpuWeight !== undefined) await writeFile(join(parents.cpu, 'cpu.shares'), String(sharesOfWeight(cpuWeight)));
  return { manager: new CgroupV1({ ...parents, unified }) };
}

/** The server's own cgroup per v1 controller, from /proc/self/cgroup (`4:memory:/some/path`). */
async function ownV1Cgroups(): Promise<Map<string, string>> {
  const own = new Map<string, string>();
  for (const line of (await readFile('/proc/self/cgroup', 'utf8')).split('\n')) {
    const [, controllers, path] = line.split(':');
    if (!controllers || path === undefined) continue;
    for (const controller of controllers.split(',')) own.set(controller, path);
  }
  return own;
}
