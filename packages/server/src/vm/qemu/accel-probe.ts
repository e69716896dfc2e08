/**
 * Chooses the accelerator by booting the real kernel, not by looking at /dev/kvm: a /dev/kvm can exist and
 * still be useless (nested virtualisation without the needed CPU features, or PVM, which needs a special
 * guest kernel: QEMU then aborts on an MSR, or the guest crawls at emulation speed). KVM passes when the
 * guest prints the initramfs marker within a few seconds, which takes well under a second on real KVM.
 */
import { constants } from 'node:fs';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Accelerator, AcceleratorRequest, GuestImageFiles } from '../vm-driver.ts';
import { readTail } from './console-log.ts';
import { childExited, spawnQemu } from './process.ts';

export interface AcceleratorVerdict {
  accelerator: Accelerator;
  /** Why the request was not met as asked (auto fell back to TCG), else null. */
  fallbackReason: string | null;
}

export interface KvmTestResult {
  ok: boolean;
  /** Time to the initramfs marker, or how long we waited. */
  elapsedMs: number;
  reason: string;
}

/** Default budget of the KVM self-test boot. */
export const KVM_TEST_TIMEOUT_MS = 5000;

/**
 * Boots `image`'s kernel and initramfs under KVM (no disk, no network) and waits for the initramfs marker.
 * The guest is killed as soon as the answer is known.
 */
export async function testKvm(options: { qemuBinary: string; image: GuestImageFiles; timeoutMs?: number }): Promise<KvmTestResult> {
  const timeoutMs = options.timeoutMs ?? KVM_TEST_TIMEOUT_MS;
  try {
    await access('/dev/kvm', constants.R_OK | constants.W_OK);
  } catch (error) {
    return { ok: false, elapsedMs: 0, reason: `/dev/kvm is not usable: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
  }
  const dir = await mkdtemp(join(tmpdir(), 'sandboxd-kvm-test-'));
  const consolePath = join(dir, 'console.log');
  const logPath = join(dir, 'qemu.log');
  const started = Date.now();
  const child = spawnQemu({
    binary: options.qemuBinary,
    logPath,
    argv: [
      '-nodefaults',
      '-no-user-config',
      '-nographic',
      '-no-reboot',
      '-machine',
      'microvm,acpi=on',
      '-accel',
      'kvm',
      '-cpu',
      'host',
      '-m',
      '256M',
      '-smp',
      '1',
      '-chardev',
      `file,id=console,path=${consolePath}`,
      '-serial',
      'chardev:console',
      '-kernel',
      options.image.kernelPath,
      '-initrd',
      options.image.initrdPath,
      '-append',
      'console=ttyS0 quiet panic=-1',
    ],
  });
  const exit = childExited(child);
  let exited = false;
  void exit.then(() => (exited = true));
  try {
    while (Date.now() - started < timeoutMs) {
      const text = await readFile(consolePath, 'utf8').catch(() => '');
      if (text.includes('sandboxd-stage: initramfs')) return { ok: true, elapsedMs: Date.now() - started, reason: 'the KVM test boot reached the initramfs' };
      if (exited) {
        const log = (await readTail(logPath, 5)).replace(/\s+/g, ' ').trim();
        return { ok: false, elapsedMs: Date.now() - started, reason: `QEMU exited during the KVM test boot: ${log || 'no message'}` };
      }
      await sleep(25);
    }
    return {
      ok: false,
      elapsedMs: Date.now() - started,
      reason: `the KVM test boot did not reach the initramfs within ${timeoutMs} ms (KVM present but too slow to use)`,
    };
  } finally {
    if (!exited) child.kill('SIGKILL');
    await exit;
    await rm(dir, { recursive: true, force: true });
  }
}

const verdicts = new Map<string, Promise<AcceleratorVerdict>>();

/**
 * The accelerator to use for `request`, decided once per process (and QEMU binary). `kvm` fails when the
 * self-test fails; `auto` falls back to TCG and says why.
 */
export function resolveAccelerator(options: {
  request: AcceleratorRequest;
  qemuBinary: string;
  image: GuestImageFiles;
  timeoutMs?: number;
}): Promise<AcceleratorVerdict> {
  if (options.request === 'tcg') return Promise.resolve({ accelerator: 'tcg', fallbackReason: null });
  const key = `${options.request}\0${options.qemuBinary}`;
  let verdict = verdicts.get(key);
  if (!verdict) {
    verdict = testKvm(options).then((result) => {
      if (result.ok) return { accelerator: 'kvm', fallbackReason: null } satisfies AcceleratorVerdict;
      if (options.request === 'kvm') throw new Error(`KVM was requested but is not usable: ${result.reason}`);
      return { accelerator: 'tcg', fallbackReason: `KVM not used, running on TCG (much slower): ${result.reason}` } satisfies AcceleratorVerdict;
    });
    // A failed explicit-KVM verdict is not cached: the operator may fix the host and retry.
    verdict.catch(() => verdicts.delete(key));
    verdicts.set(key, verdict);
  }
  return verdict;
}
