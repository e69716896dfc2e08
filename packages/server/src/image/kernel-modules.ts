import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { ImageBuildError } from './errors.ts';
import type { ModuleRequest } from './recipes.ts';

/** A module file to put into the initramfs, in load order. */
export interface ResolvedModule {
  /** Module name as `insmod` file stem, e.g. `virtio-rng` (spelled like its file). */
  name: string;
  /** Absolute path of the `.ko`/`.ko.xz` file on the host. */
  path: string;
}

/** The load plan for the initramfs. */
export interface ModulePlan {
  /** Every module to load, dependencies before their users, each once. */
  load: ResolvedModule[];
  /** Requested modules that are built into this kernel (nothing to load). */
  builtin: string[];
  /** Optional modules this kernel does not have. */
  missing: string[];
}

/** Kernel module names treat `-` and `_` as the same character. */
function canonical(name: string): string {
  return name.replaceAll('-', '_');
}

/** `kernel/drivers/virtio/virtio_ring.ko.xz` -> `virtio_ring`. */
function stemOf(path: string): string {
  return basename(path).replace(/\.ko(\.xz|\.zst|\.gz)?$/, '');
}

/**
 * Resolves the requested modules against a kernel's `modules.dep` and `modules.builtin`: the result loads
 * in the recipe's order, with each module's dependencies inserted just before it. modules.dep lists a
 * module's dependencies so that modprobe loads them from last to first; resolving them recursively gives
 * the same order without relying on that.
 */
export async function resolveKernelModules(modulesDir: string, requests: readonly ModuleRequest[]): Promise<ModulePlan> {
  const [depText, builtinText] = await Promise.all([
    readFile(join(modulesDir, 'modules.dep'), 'utf8'),
    readFile(join(modulesDir, 'modules.builtin'), 'utf8').catch(() => ''),
  ]);
  const deps = new Map<string, { path: string; deps: string[] }>();
  for (const line of depText.split('\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const path = line.slice(0, colon);
    const depPaths = line
      .slice(colon + 1)
      .trim()
      .split(/\s+/)
      .filter(Boolean);
    deps.set(canonical(stemOf(path)), { path, deps: depPaths.map((dep) => canonical(stemOf(dep))) });
  }
  const builtins = new Set(
    builtinText
      .split('\n')
      .filter(Boolean)
      .map((path) => canonical(stemOf(path))),
  );

  const plan: ModulePlan = { load: [], builtin: [], missing: [] };
  const added = new Set<string>();
  const visit = (key: string, chain: string[]): void => {
    if (added.has(key)) return;
    if (chain.includes(key)) throw new ImageBuildError('IMAGE_INPUT_INVALID', `module dependency cycle: ${[...chain, key].join(' -> ')}`);
    const entry = deps.get(key);
    if (!entry) throw new ImageBuildError('IMAGE_INPUT_INVALID', `module ${key} is neither in modules.dep nor built in (${modulesDir})`);
    for (const dep of [...entry.deps].reverse()) visit(dep, [...chain, key]);
    added.add(key);
    plan.load.push({ name: stemOf(entry.path), path: join(modulesDir, entry.path) });
  };
  for (const request of requests) {
    const key = canonical(request.name);
    if (deps.has(key)) visit(key, []);
    else if (builtins.has(key)) plan.builtin.push(request.name);
    else if (request.optional) plan.missing.push(request.name);
    else throw new ImageBuildError('IMAGE_INPUT_INVALID', `kernel module ${request.name} is required by initramfs/modules.txt but is not in ${modulesDir}`);
  }
  return plan;
}
