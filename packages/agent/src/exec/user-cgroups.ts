/**
 * The cgroups of what the agent runs for the user: one cgroup v2 group per execution, Python interpreter and
 * terminal, all under one parent (`<cgroup2 mount>/sandboxd-exec`), while the agent itself stays in the root group.
 *
 * - Accounting: a group's `cpu.stat` counts the process and every descendant (also ones that left its process
 *   group) with microsecond precision; Node's child_process reports no rusage.
 * - Ending: `cgroup.kill` ends everything a program started, wherever it went.
 * - Limits (where the guest enables the controllers: guest-init does, at the root): every group may hold at most
 *   {@link GROUP_PIDS_MAX} processes and threads, all of them together {@link USER_PIDS_MAX}, so a fork bomb cannot
 *   fill the VM's process table or memory; and the parent's `cpu.weight` of {@link USER_CPU_WEIGHT} against the
 *   agent's threads (nice 0 in the root group, worth 100 each) keeps the agent answering while user code
 *   saturates the CPU: it gets ~90 % of the CPU whenever it wants some, the user's programs all of the rest.
 * - Runaways: when a program's main process has ended, what it left behind (a background server, say) keeps running,
 *   unless its group ran into its process limit: a fork bomb's leftovers are killed then, or as soon as they hit it.
 * - Memory: `memory.events` tells an out-of-memory kill in a group from any other SIGKILL.
 *
 * The child is born in its group: the agent joins the group for the moment of the (synchronous) fork and
 * returns home right after (`user-program.ts`), so nothing the child forks escapes, and no wrapper process is
 * needed (an `sh` that joined the group before exec'ing the program cost ~50 ms per exec under TCG). Groups whose
 * processes outlive their program stay until they are empty and are removed by a later sweep.
 */
import { mkdirSync, readFileSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ExecCpuTime } from '../protocol/messages.ts';
import { readMounts } from '../system/mounts.ts';

/** Processes and threads (`pids.max` counts both) of one execution, interpreter or terminal at once. */
export const GROUP_PIDS_MAX = 512;
/** Processes and threads of all the user's programs together. */
export const USER_PIDS_MAX = 1024;
/** `cpu.weight` of all the user's programs together, against 100 for each thread of the agent. */
export const USER_CPU_WEIGHT = 10;
/** The controllers the user's groups use (where the guest has them). */
const CONTROLLERS = ['cpu', 'memory', 'pids'];

/** What a group runs: names its directory. */
export type UserProgramKind = 'exec' | 'python' | 'pty';

/** A counter of a cgroup `*.events` or `*.stat` file's text (`name value` lines); 0 when absent. */
function parseCounter(text: string, name: string): number {
  return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
}

/** A counter of a cgroup file; 0 when the file or the counter is absent. */
function readCounter(file: string, name: string): number {
  try {
    return parseCounter(readFileSync(file, 'utf8'), name);
  } catch {
    return 0;
  }
}

/** One program's cgroup. */
export class UserCgroup {
  constructor(
    /** The group's directory. */
    readonly dir: string,
    private readonly owner: UserCgroups,
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
      const ms = (name: string): number => parseCounter(stat, name) / 1000;
      return { userMs: ms('user_usec'), systemMs: ms('system_usec'), totalMs: ms('usage_usec') };
    } catch {
      return null;
    }
  }

  /** How many processes of the group the kernel's out-of-memory killer ended (0 without the memory controller). */
  oomKills(): number {
    return readCounter(join(this.dir, 'memory.events'), 'oom_kill');
  }

  /** True once a fork in the group failed because it held {@link GROUP_PIDS_MAX} tasks. */
  hitProcessLimit(): boolean {
    return readCounter(join(this.dir, 'pids.events'), 'max') > 0;
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

  /**
   * The program ended: its leftovers are killed if the group ran into its process limit (a fork bomb's), and
   * the group is removed now if it is empty, otherwise once it is (see {@link UserCgroups.sweep}).
   */
  async release(): Promise<void> {
    if (this.hitProcessLimit()) await this.kill();
    await this.owner.remove(this.dir);
  }
}

/** Creates the user's cgroups under one parent directory. */
export class UserCgroups {
  private sequence = 0;
  /** Groups whose program ended while processes it started still run, with a watch on their process limit. */
  private readonly lingering = new Map<string, FSWatcher | null>();

  private constructor(
    readonly root: string,
    /** `cgroup.procs` of the agent's own group, where it returns after each spawn. */
    readonly homeProcsPath: string,
  ) {}

  /**
   * Prepares the parent `root` (created if needed; default `<cgroup2 mount>/sandboxd-exec`) with the limits of
   * all user programs. Returns null when no cgroup v2 hierarchy is usable (or the agent could not move between
   * groups); programs then run without groups: no CPU time, no limits.
   */
  static async create(root?: string): Promise<UserCgroups | null> {
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
      await limitUserPrograms(dir);
      return new UserCgroups(dir, homeProcsPath);
    } catch {
      return null;
    }
  }

  /**
   * A fresh group for one program (made synchronously, like {@link UserCgroup.readCpu}); null when it cannot be
   * made (e.g. the hierarchy is full): the program then runs in the agent's group, without accounting or limits.
   */
  group(kind: UserProgramKind): UserCgroup | null {
    void this.sweep();
    const dir = join(this.root, `${kind}-${++this.sequence}`);
    try {
      mkdirSync(dir);
    } catch {
      return null;
    }
    try {
      writeFileSync(join(dir, 'pids.max'), String(GROUP_PIDS_MAX));
    } catch {
      // No pids controller here (a host without it): the group only accounts.
    }
    return new UserCgroup(dir, this);
  }

  /** Removes groups left by earlier programs once their last process has exited. */
  async sweep(): Promise<void> {
    for (const dir of [...this.lingering.keys()]) {
      try {
        await rmdir(dir);
        this.forget(dir);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') this.forget(dir);
      }
    }
  }

  /** Removes all groups it can and stops watching the others (agent shutdown, tests). */
  async dispose(): Promise<void> {
    await this.sweep();
    for (const dir of [...this.lingering.keys()]) this.forget(dir);
  }

  /** @internal Used by {@link UserCgroup.release}. */
  async remove(dir: string): Promise<void> {
    try {
      await rmdir(dir);
    } catch (error) {
      // EBUSY: processes still live in it (a background server); try again on a later sweep.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && !this.lingering.has(dir)) this.lingering.set(dir, watchRunaway(dir));
    }
  }

  private forget(dir: string): void {
    this.lingering.get(dir)?.close();
    this.lingering.delete(dir);
  }
}

/**
 * Kills what is left in a group once it runs into its process limit (the kernel notifies `pids.events` changes
 * through inotify, so nothing polls). Null when the group has no pids controller.
 */
function watchRunaway(dir: string): FSWatcher | null {
  const events = join(dir, 'pids.events');
  try {
    const watcher = watch(events, { persistent: false }, () => {
      if (readCounter(events, 'max') > 0) void writeFile(join(dir, 'cgroup.kill'), '1').catch(() => undefined);
    });
    watcher.on('error', () => watcher.close());
    return watcher;
  } catch {
    return null;
  }
}

/** Enables the controllers for the user's groups under `dir` and sets the limits of all of them together. */
async function limitUserPrograms(dir: string): Promise<void> {
  const available = (await readFile(join(dir, 'cgroup.controllers'), 'utf8').catch(() => '')).split(/\s+/);
  const controllers = CONTROLLERS.filter((name) => available.includes(name));
  if (controllers.length === 0) return;
  // Each write may fail on its own (a controller busy elsewhere, a host's hierarchy): what works, works.
  await writeFile(join(dir, 'cgroup.subtree_control'), controllers.map((name) => `+${name}`).join(' ')).catch(() => undefined);
  await writeFile(join(dir, 'pids.max'), String(USER_PIDS_MAX)).catch(() => undefined);
  await writeFile(join(dir, 'cpu.weight'), String(USER_CPU_WEIGHT)).catch(() => undefined);
}

/** The mount point of the cgroup v2 hierarchy, from /proc/self/mounts. */
export async function findCgroup2Mount(): Promise<string | null> {
  return (await readMounts()).find((mount) => mount.type === 'cgroup2')?.target ?? null;
}
