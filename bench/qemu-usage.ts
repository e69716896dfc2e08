/**
 * What a QEMU process costs the host, read from procfs: the memory and CPU figures the engine, density and
 * idle-cost benches report. Each read answers undefined once the process has ended (a run directory outlives its
 * process for a moment).
 */
import fs from 'node:fs';
import path from 'node:path';

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ). */
export const HZ = 100;

function readOrUndefined(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** Rss, Pss and Private_Clean + Private_Dirty of a process from /proc/<pid>/smaps_rollup, KiB. */
export function memoryOf(pid: number): { rssKib: number; pssKib: number; privateKib: number } | undefined {
  const text = readOrUndefined(`/proc/${pid}/smaps_rollup`);
  if (text === undefined) return undefined;
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(text)?.[1] ?? Number.NaN);
  return { rssKib: field('Rss'), pssKib: field('Pss'), privateKib: field('Private_Clean') + field('Private_Dirty') };
}

/**
 * Private memory of TCG's translated-code cache, KiB: the anonymous mapping of `tb-size` (`cacheMb`), found by its
 * size. Under TCG the largest part of an idle VM's own memory; absent under KVM (0).
 */
export function tcgCodeCacheKib(pid: number, cacheMb: number): number | undefined {
  const text = readOrUndefined(`/proc/${pid}/smaps`);
  if (text === undefined) return undefined;
  const sizeKb = cacheMb * 1024;
  let kib = 0;
  let inCache = false;
  for (const line of text.split('\n')) {
    const size = /^Size:\s+(\d+) kB/.exec(line);
    if (size) inCache = Math.abs(Number(size[1]) - sizeKb) <= 8;
    const dirty = /^Private_Dirty:\s+(\d+) kB/.exec(line);
    if (dirty && inCache) kib += Number(dirty[1]);
  }
  return kib;
}

/** utime + stime of a process and its threads, in clock ticks. */
export function cpuTicks(pid: number): number | undefined {
  const text = readOrUndefined(`/proc/${pid}/stat`);
  if (text === undefined) return undefined;
  const fields = text.split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/**
 * The QEMU processes of a run root: the pid in each `<runDir>/<vm>/vm.json`, kept if that process is still a QEMU.
 */
export function qemuPids(runDir: string): number[] {
  const pids: number[] = [];
  for (const name of fs.readdirSync(runDir)) {
    try {
      const { pid } = JSON.parse(fs.readFileSync(path.join(runDir, name, 'vm.json'), 'utf8')) as { pid: number };
      if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]!.includes('qemu-system')) pids.push(pid);
    } catch {
      // no vm.json (yet or any more), or its process ended
    }
  }
  return pids;
}

/**
 * CPU of `pids` together, % of one core per process, over back-to-back windows of `windowMs`: a crowd of restores
 * settles slowly on a small host, so callers report the last window (steady state) and log the others.
 */
export async function idleCpuWindows(pids: number[], windows: number, windowMs: number): Promise<number[]> {
  const out: number[] = [];
  for (let w = 0; w < windows; w++) {
    const before = pids.map(cpuTicks);
    await new Promise((r) => setTimeout(r, windowMs));
    const after = pids.map(cpuTicks);
    let ticks = 0;
    let counted = 0;
    pids.forEach((_, i) => {
      if (before[i] === undefined || after[i] === undefined) return;
      ticks += after[i]! - before[i]!;
      counted++;
    });
    out.push(counted === 0 ? Number.NaN : Math.round((ticks / HZ / counted / (windowMs / 1000)) * 1000) / 10);
  }
  return out;
}
