import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { extractVmlinux } from './extract-vmlinux.ts';
import { hashInputs, sha256File } from './hashing.ts';
import type { HostKernel } from './host-kernel.ts';
import { buildInitramfs } from './initramfs.ts';
import { resolveKernelModules } from './kernel-modules.ts';
import type { ProgressReporter } from './progress.ts';
import type { Recipes } from './recipes.ts';

/** Bump when the build code changes what this layer contains, so caches built by older code are not reused. */
const KERNEL_RECIPE_VERSION = 1;

/** File names inside a kernel layer directory. */
export const KERNEL_FILES = { vmlinux: 'vmlinux', initrd: 'initrd.cpio.gz', info: 'kernel.json' } as const;

/** Host paths the kernel layer reads. */
export interface KernelLayerInput {
  kernel: HostKernel;
  busyboxPath: string;
  recipes: Recipes;
}

/**
 * The kernel layer's hash: the kernel release and its bzImage bytes (a rebuilt Debian kernel can keep its
 * release string), busybox, the initramfs recipe files and this code's recipe version.
 */
export async function hashKernelLayer(input: KernelLayerInput): Promise<string> {
  const [vmlinuzSha, busyboxSha] = await Promise.all([sha256File(input.kernel.vmlinuzPath), sha256File(input.busyboxPath)]);
  return hashInputs([
    ['layer', 'kernel'],
    ['recipe-version', String(KERNEL_RECIPE_VERSION)],
    ['kernel-version', input.kernel.version],
    ['vmlinuz-sha256', vmlinuzSha],
    ['busybox-sha256', busyboxSha],
    ['initramfs/init', input.recipes.initramfsInit],
    ['initramfs/modules.txt', input.recipes.modulesText],
  ]);
}

/** Builds the kernel layer into `dir`: `vmlinux`, `initrd.cpio.gz` and `kernel.json` (what went in). */
export async function buildKernelLayer(input: KernelLayerInput, dir: string, progress: ProgressReporter): Promise<void> {
  await progress.stage('kernel', 'extract vmlinux', () => extractVmlinux(input.kernel.vmlinuzPath, join(dir, KERNEL_FILES.vmlinux)));
  const plan = await progress.stage('kernel', 'build initramfs', async () => {
    const modules = await resolveKernelModules(input.kernel.modulesDir, input.recipes.modules);
    const staging = join(dir, 'initramfs-staging');
    await mkdir(staging);
    await buildInitramfs(
      { busyboxPath: input.busyboxPath, initScript: input.recipes.initramfsInit, modules: modules.load },
      staging,
      join(dir, KERNEL_FILES.initrd),
    );
    await rm(staging, { recursive: true });
    return modules;
  });
  const [vmlinux, initrd] = await Promise.all([stat(join(dir, KERNEL_FILES.vmlinux)), stat(join(dir, KERNEL_FILES.initrd))]);
  const info = {
    kernelVersion: input.kernel.version,
    vmlinuzPath: input.kernel.vmlinuzPath,
    vmlinuxBytes: vmlinux.size,
    initrdBytes: initrd.size,
    modules: plan.load.map((module) => module.name),
    builtinModules: plan.builtin,
    missingOptionalModules: plan.missing,
  };
  await writeFile(join(dir, KERNEL_FILES.info), `${JSON.stringify(info, null, 2)}\n`);
}
