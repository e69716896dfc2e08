/**
 * The host's memory floor: a new VM (a warm-pool refill included) is refused while the kernel's estimate of
 * memory available to new work (`MemAvailable` in /proc/meminfo: free memory plus the reclaimable page cache)
 * is below `minFreeMemoryMb`. Restored VMs share their snapshot's untouched memory through the page cache, so what
 * one more VM costs is its private memory (~70–90 MiB idle under TCG), not its guest size; the floor is what keeps
 * a crowd of them from pushing the host into swap or the OOM killer.
 */
import { readFileSync } from 'node:fs';
import { AppError } from '../core/errors.ts';

/** `MemAvailable` of a /proc/meminfo text, MiB; undefined when the kernel does not report it. */
export function memAvailableMb(meminfo: string): number | undefined {
  const match = /^MemAvailable:\s+(\d+) kB$/m.exec(meminfo);
  return match ? Number(match[1]) / 1024 : undefined;
}

/** The host's MemAvailable now, MiB (undefined when the kernel does not report it). Synchronous: procfs never blocks. */
function availableMb(): number | undefined {
  return memAvailableMb(readFileSync('/proc/meminfo', 'utf8'));
}

/** Whether the host has at least `minFreeMb` available now (the pool asks between refills). */
export function hostMemoryAbove(minFreeMb: number): boolean {
  if (minFreeMb <= 0) return true;
  const available = availableMb();
  return available === undefined || available >= minFreeMb;
}

/**
 * Throws HOST_MEMORY_LOW when the host has less than `minFreeMb` available (nothing is created then). Synchronous,
 * so a restore does not yield before it queues (a request arriving meanwhile would find the queue as it was).
 */
export function assertHostMemory(minFreeMb: number): void {
  if (hostMemoryAbove(minFreeMb)) return;
  throw new AppError(
    'HOST_MEMORY_LOW',
    `the server is low on memory (${Math.floor(availableMb() ?? 0)} MiB available, it keeps at least ${minFreeMb} MiB) and starts no new VM until some end: retry later or ask the operator`,
  );
}
