/**
 * CPU accounting (and a reliable kill) for exec'd processes through one cgroup v2 group per execution.
 *
 * Why cgroups: Node's child_process reports no rusage, and `/proc/<pid>/stat` is gone once libuv reaps the
 * child. A cgroup's `cpu.stat` counts the process and every descendant (also ones that left its process group)
 * with microsecond precision, exists without enabling any controller, and `cgroup.kill` ends them all.
 *
 * The child is born in its group: the agent joins the group for the moment of the (synchronous) fork and
 * returns home right after (`user-program.ts`), so nothing the child forks escapes the accounting, and no wrapper
 * process is needed (an `sh` that joined the group before exec'ing the program cost ~50 ms per exec under
 * TCG). Groups whose processes outlive the execution (background servers) stay until they are empty and are
 * removed by a later sweep.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ExecCpuTime } from '../protocol/messages.ts';
import { readMounts } from '../system/mounts.ts';

/** One execution's cgroup. */
export class ExecCgroup {
  constructor(
    /** The group's directory. */
    readonly dir: string,
    private readonly owner: CgroupAccounting,
  ) {}

  /** The file a process writes `0` to in order to join the group. */
  get procsPath(): string {
    return join(this.dir, 'cgroup.procs');
  }

  /** `cgroup.procs` of the agent's own group, where it returns after starting a child in this one. */
  get homeProcsPath(): string {
    return this.owner.homeProcsPath;
  }

  /**
   * CPU time used so far by everything that ran in the group. Synchronous: a read of a few bytes from cgroupfs
   * is quicker than the thread-pool hop of an asynchronous one (~2 ms under TCG), and it is on the exec path.
   */
  readCpu(): ExecCpuTime | null {
    try {
      const stat = readFileSync(join(this.dir, 'cpu.stat'), 'utf8');
      const field = (name: string): number => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(stat)?.[1] ?? 0);
      const userMs = field('user_usec') / 1000;
      const systemMs = field('system_usec') / 1000;
      return { userMs, systemMs, totalMs: field('usage_usec') / 1000 };
    } catch {
      return null;
    }
  }

  /** Kills every process in the group (kernel ≥ 5.14); false when the kernel lacks `cgroup.kill`. */
  async kill(): Promise<boolean> {
    try {
      await writeFile(join(this.dir, 'cgroup.kill'), '1');
      return true;
    } catch {
      return false;
    }
  }

  /** Removes the group now if it is empty, otherwise later (see {@link CgroupAccounting.sweep}). */
  async release(): Promise<void> {
    await this.owner.remove(this.dir);
  }
}

/** Creates per-execution cgroups under one parent directory. */
export class CgroupAccounting {
  private sequence = 0;
  private readonly lingering = new Set<string>();

  private constructor(
    readonly root: string,
    /** `cgroup.procs` of the agent's own group, where it returns after each spawn. */
    readonly homeProcsPath: string,
  ) {}

  /**
   * Prepares accounting under `root` (created if needed), or under `<cgroup2 mount>/sandboxd-exec` when `root`
   * is not given. Returns null when no cgroup v2 hierarchy is usable (or the agent could not move between
   * groups); execs then report no CPU time.
   */
  static async create(root?: string): Promise<CgroupAccounting | null> {
    const mount = await findCgroup2Mount();
    if (!mount) return null;
    const dir = root ?? join(mount, 'sandboxd-exec');
    try {
      const own = /^0::(.*)$/m.exec(await readFile('/proc/self/cgroup', 'utf8'))?.[1];
      if (own === undefined) return null;
      const homeProcsPath = join(mount, own, 'cgroup.procs');
      await mkdir(dir, { recursive: true });
      await readFile(join(dir, 'cgroup.procs'));
      // Moving back home is what starting a child in a group relies on: prove it is allowed (a no-op move) before using it.
      await writeFile(homeProcsPath, '0');
      return new CgroupAccounting(dir, homeProcsPath);
    } catch {
      return null;
    }
  }

  /**
   * A fresh group for one execution (made synchronously, like {@link ExecCgroup.readCpu}); null when it cannot
   * be made (e.g. the hierarchy is full): the execution then reports no CPU time.
   */
  group(): ExecCgroup | null {
    void this.sweep();
    const dir = join(this.root, `exec-${++this.sequence}`);
    try {
      mkdirSync(dir);
    } catch {
      return null;
    }
    return new ExecCgroup(dir, this);
  }

  /** Removes groups left by earlier executions once their last process has exited. */
  async sweep(): Promise<void> {
    for (const dir of [...this.lingering]) {
      try {
        await rmdir(dir);
        this.lingering.delete(dir);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') this.lingering.delete(dir);
      }
    }
  }

  /** Removes all groups it can (agent shutdown, tests). */
  async dispose(): Promise<void> {
    await this.sweep();
  }

  /** @internal Used by {@link ExecCgroup.release}. */
  async remove(dir: string): Promise<void> {
    try {
      await rmdir(dir);
    } catch (error) {
      // EBUSY: processes still live in it (a background server); try again on a later sweep.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.lingering.add(dir);
    }
  }
}

/** The mount point of the cgroup v2 hierarchy, from /proc/self/mounts. */
export async function findCgroup2Mount(): Promise<string | null> {
  return (await readMounts()).find((mount) => mount.type === 'cgroup2')?.target ?? null;
}
