/**
 * Guest memory size with a virtio balloon. A snapshot fixes `-m`, so a snapshot is booted with the most
 * memory it serves and its restores give the guest less by keeping the rest in the balloon. Growing (the
 * balloon deflating) is fast, 0.4 to 3 s per GiB under TCG depending on host load; shrinking (inflating)
 * is slow, 12 to 30 s per GiB under TCG, which is why snapshots are saved at their smallest size and
 * restores only ever grow.
 *
 * The balloon is cooperative: a hostile guest can unload its driver and touch all of `-m`. The VM's cgroup
 * memory limit is what enforces the size; the balloon is what makes the guest see it (MemTotal).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { QmpClient } from './qmp-client.ts';

const MIB = 1024 * 1024;

/**
 * Guest memory the Debian 6.1 kernel reserves for itself and hides from MemTotal, as a function of the RAM it
 * booted with, KiB, measured with cold boots of `-m` 128 … 8192 on microvm: 17.5 KiB per MiB (struct pages,
 * 64 bytes per 4 KiB page, plus smaller per-page tables) and a 64 MiB SWIOTLB bounce buffer once RAM reaches
 * above 4 GiB (microvm maps RAM beyond 3 GiB there). The constant part cancels out below.
 */
function reservedKb(memoryMb: number): number {
  return 17.5 * memoryMb + (memoryMb > 3072 ? 64 * 1024 : 0);
}

/**
 * The balloon target ("actual" guest RAM) that makes a guest booted with `bootMemoryMb` look like one booted
 * with `memoryMb`: the guest kernel reserved its page tables for all the RAM it booted with, ballooned or
 * not, so the balloon leaves it the difference on top. Measured: MemTotal of restores at 256/512/1024/2048
 * MiB from a 2048 MiB snapshot is within 1.3/0.5/0.2/0 % of cold boots with that `-m`.
 */
export function balloonTargetMb(bootMemoryMb: number, memoryMb: number): number {
  return Math.min(bootMemoryMb, memoryMb + Math.round((reservedKb(bootMemoryMb) - reservedKb(memoryMb)) / 1024));
}

/** The guest RAM the balloon leaves to the guest now, MiB. */
export async function balloonActualMb(qmp: QmpClient): Promise<number> {
  const { actual } = await qmp.execute<{ actual: number }>('query-balloon');
  return actual / MIB;
}

/**
 * Asks the guest's balloon for `targetMb` of RAM and waits until the guest got there (within 1 MiB).
 * Rejects after `timeoutMs`, or earlier when the guest stopped moving for `stallMs` (a guest that cannot
 * free more memory never gets there), saying how far it got.
 */
export async function resizeGuestMemory(qmp: QmpClient, targetMb: number, timeoutMs: number, stallMs = 15_000): Promise<void> {
  await qmp.execute('balloon', { value: Math.round(targetMb * MIB) });
  const deadline = Date.now() + timeoutMs;
  let lastMb = Number.NaN;
  let lastChange = Date.now();
  for (;;) {
    const actualMb = await balloonActualMb(qmp);
    if (Math.abs(actualMb - targetMb) < 1) return;
    const now = Date.now();
    if (actualMb !== lastMb) {
      lastMb = actualMb;
      lastChange = now;
    }
    if (now - lastChange > stallMs)
      throw new Error(`the guest's memory stopped at ${actualMb.toFixed(0)} MiB on its way to ${targetMb} MiB (it cannot free more)`);
    if (now > deadline) throw new Error(`the guest's memory reached ${actualMb.toFixed(0)} MiB, not ${targetMb} MiB, within ${timeoutMs} ms`);
    await sleep(20);
  }
}
