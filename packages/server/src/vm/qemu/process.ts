/**
 * QEMU processes: spawning by argv (never through a shell) and recognising a process later from /proc
 * without trusting a bare pid, which the kernel may have reused.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** Identity of a process: pid plus start time (field 22 of /proc/<pid>/stat) within one kernel boot. */
export interface ProcessIdentity {
  pid: number;
  startTimeTicks: number;
  bootId: string;
}

export interface SpawnQemuOptions {
  binary: string;
  argv: string[];
  /** QEMU's stdout and stderr go here (appended), so they survive the server process. */
  logPath: string;
  /** Extra file descriptors, given to QEMU as fd 3, 4, … (e.g. an incoming migration stream). */
  extraFds?: number[];
}

/**
 * Starts QEMU in its own session (`detached`): a server crash or a Ctrl-C in the server's terminal does not
 * kill VMs, so the next server process can re-adopt or reap them. The log is a file, not a pipe, so QEMU
 * never dies of SIGPIPE when the server is gone.
 */
export function spawnQemu(options: SpawnQemuOptions): ChildProcess {
  const logFd = openSync(options.logPath, 'a', 0o640);
  try {
    return spawn(options.binary, options.argv, {
      stdio: ['ignore', logFd, logFd, ...(options.extraFds ?? [])],
      detached: true,
      // QEMU reads nothing from the environment that we want; keep the server's secrets out of it.
      env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C' },
    });
  } finally {
    closeSync(logFd); // the child has its own copy
  }
}

/** Resolves when a spawned child is gone, with how it ended. Never rejects. */
export function childExited(child: ChildProcess): Promise<{ exitCode: number | null; signal: string | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve({ exitCode: child.exitCode, signal: child.signalCode });
      return;
    }
    child.once('exit', (exitCode, signal) => resolve({ exitCode, signal }));
    // A failed spawn (ENOENT) emits 'error' and no 'exit'.
    child.once('error', () => resolve({ exitCode: child.exitCode ?? -1, signal: null }));
  });
}

let cachedBootId: string | undefined;

/** The kernel's boot id: run directories outlive reboots, pids and start times do not. */
export async function kernelBootId(): Promise<string> {
  cachedBootId ??= (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim();
  return cachedBootId;
}

/** Start time of `pid` in clock ticks since boot, or undefined when there is no such process. */
export async function processStartTime(pid: number): Promise<number | undefined> {
  let stat: string;
  try {
    stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // comm (field 2) is in parentheses and may contain spaces or ')': parse after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); starttime is field 22. A zombie has exited already.
  if (fields[0] === 'Z') return undefined;
  const start = Number(fields[19]);
  return Number.isFinite(start) ? start : undefined;
}

/** The identity of a live process. */
export async function identify(pid: number): Promise<ProcessIdentity | undefined> {
  const startTimeTicks = await processStartTime(pid);
  return startTimeTicks === undefined ? undefined : { pid, startTimeTicks, bootId: await kernelBootId() };
}

/** The argv of a live process, or undefined. */
export async function processArgv(pid: number): Promise<string[] | undefined> {
  try {
    const raw = await readFile(`/proc/${pid}/cmdline`, 'utf8');
    if (!raw) return undefined; // kernel threads and zombies have no argv
    const argv = raw.split('\0');
    if (argv.at(-1) === '') argv.pop();
    return argv;
  } catch {
    return undefined;
  }
}

/** True when `pid` still is the process recorded as `identity` and its argv mentions `marker` (the VM's name). */
export async function isSameProcess(identity: ProcessIdentity, marker: string): Promise<boolean> {
  if (identity.bootId !== (await kernelBootId())) return false;
  if ((await processStartTime(identity.pid)) !== identity.startTimeTicks) return false;
  return (await processArgv(identity.pid))?.some((arg) => arg.includes(marker)) ?? false;
}

/** Pids of live processes whose argv contains every string of `needles` (for VMs with no recorded pid). */
export async function findProcesses(needles: string[]): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const argv = await processArgv(Number(entry));
    if (argv && needles.every((needle) => argv.some((arg) => arg.includes(needle)))) found.push(Number(entry));
  }
  return found;
}

/** Sends SIGKILL to a verified process and waits until it is gone (or a zombie) for up to `timeoutMs`. */
export async function killAndWait(identity: ProcessIdentity, marker: string, timeoutMs = 5000): Promise<boolean> {
  if (!(await isSameProcess(identity, marker))) return true;
  try {
    process.kill(identity.pid, 'SIGKILL');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return true;
    throw error;
  }
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await processStartTime(identity.pid)) !== identity.startTimeTicks) return true;
    await sleep(20);
  }
  return false;
}
