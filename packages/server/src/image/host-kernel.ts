import { access, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ImageBuildError } from './errors.ts';

/** A kernel installed on the host by Debian's linux-image package. */
export interface HostKernel {
  version: string;
  /** `/boot/vmlinuz-<version>` (bzImage). */
  vmlinuzPath: string;
  /** `/lib/modules/<version>`. */
  modulesDir: string;
}

/** Where the host keeps kernels; overridable for tests. */
export interface HostKernelPaths {
  bootDir?: string;
  modulesRoot?: string;
}

/**
 * Finds the kernel to boot guests with: `version` if given, otherwise the newest release that has both a
 * vmlinuz and a modules directory (a half-removed kernel package has only one of them).
 */
export async function findHostKernel(version?: string, paths: HostKernelPaths = {}): Promise<HostKernel> {
  const bootDir = paths.bootDir ?? '/boot';
  const modulesRoot = paths.modulesRoot ?? '/lib/modules';
  const hint = 'install a Debian kernel on the host (apt-get install linux-image-amd64)';
  const candidates = version === undefined ? await listVersions(bootDir) : [version];
  const usable: HostKernel[] = [];
  for (const candidate of candidates) {
    const kernel = { version: candidate, vmlinuzPath: join(bootDir, `vmlinuz-${candidate}`), modulesDir: join(modulesRoot, candidate) };
    if ((await readable(kernel.vmlinuzPath)) && (await readable(join(kernel.modulesDir, 'modules.dep')))) usable.push(kernel);
  }
  if (usable.length === 0) {
    const what =
      version === undefined
        ? `no kernel with both ${bootDir}/vmlinuz-* and ${modulesRoot}/*/modules.dep`
        : `kernel ${version} not found (${bootDir}/vmlinuz-${version}, ${modulesRoot}/${version}/modules.dep)`;
    throw new ImageBuildError('IMAGE_KERNEL_NOT_FOUND', `${what}: ${hint}`);
  }
  usable.sort((a, b) => b.version.localeCompare(a.version, 'en', { numeric: true }));
  return usable[0] as HostKernel;
}

async function listVersions(bootDir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(bootDir);
  } catch {
    return [];
  }
  return names.filter((name) => name.startsWith('vmlinuz-')).map((name) => name.slice('vmlinuz-'.length));
}

async function readable(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
