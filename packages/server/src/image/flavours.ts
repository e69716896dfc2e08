/**
 * The built-in templates' image flavours, from their recipe folders under `packages/server/images/`. Each adds
 * Debian packages (its own cached base layer) and a few files to the default image; kernel, agent and guest-init
 * stay the default image's, so a flavour boots under the same contract.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ImageBuildError } from './errors.ts';
import { findHostKernel } from './host-kernel.ts';
import { resolveKernelModules } from './kernel-modules.ts';
import { defaultRecipesDir, parseList } from './recipes.ts';
import type { FlavourFile, ImageFlavour } from './types.ts';

/** Where the browser template's start script is installed in the guest. */
export const BROWSER_START_PATH = '/opt/sandboxd/browser/start-browser';
/** Where Chromium's DevTools endpoint listens in browser VMs (guest loopback; `start-browser`'s argument). */
export const BROWSER_DEVTOOLS_PORT = 9222;
/** Where the desktop template's start script and its desktop service (bundled by `@sandboxd/agent`) go. */
export const DESKTOP_START_PATH = '/opt/sandboxd/desktop/start-desktop';
export const DESKTOP_SERVICE_PATH = '/opt/sandboxd/desktop/desktop.cjs';
/** The desktop service's bundle on the host (`npm run bundle:desktop -w @sandboxd/agent` writes it; the set-up script runs it). */
export const DESKTOP_SERVICE_BUNDLE = fileURLToPath(new URL('../../../agent/dist/desktop.cjs', import.meta.url));

/** Where the docker template's start script goes, and the kernel modules it loads (with their `load-order`). */
export const DOCKER_START_PATH = '/opt/sandboxd/docker/start-docker';
export const DOCKER_MODULES_DIR = '/opt/sandboxd/docker/modules';

async function readInput(path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    throw new ImageBuildError('IMAGE_INPUT_INVALID', `cannot read ${path}`, { cause: error });
  }
}

/**
 * The browser template's image: Debian's `chromium` and fonts, and `start-browser`, which the engine runs once in
 * the VM its snapshot is made of. Chromium with its libraries is ~650 MiB, so the disk is 2 GiB.
 */
export async function browserFlavour(recipesDir: string = defaultRecipesDir()): Promise<ImageFlavour> {
  const [packages, startScript] = await Promise.all([
    readInput(join(recipesDir, 'browser/packages.txt')),
    readInput(join(recipesDir, 'browser/start-browser')),
  ]);
  return {
    name: 'browser',
    packages: parseList(packages),
    files: [{ path: BROWSER_START_PATH, content: startScript, mode: 0o755 }],
    diskSizeGiB: 2,
  };
}

/**
 * The desktop template's image: an X desktop with a VNC server (TigerVNC's Xvnc), openbox, xterm, Chromium,
 * xdotool, ffmpeg and noVNC's files, plus `start-desktop` and the desktop service (the computer-use API). About
 * 1 GiB more than the default image, so the disk is 3 GiB.
 */
export async function desktopFlavour(recipesDir: string = defaultRecipesDir(), serviceBundle: string = DESKTOP_SERVICE_BUNDLE): Promise<ImageFlavour> {
  const [packages, startScript, service] = await Promise.all([
    readInput(join(recipesDir, 'desktop/packages.txt')),
    readInput(join(recipesDir, 'desktop/start-desktop')),
    readInput(serviceBundle),
  ]);
  return {
    name: 'desktop',
    packages: parseList(packages),
    files: [
      { path: DESKTOP_START_PATH, content: startScript, mode: 0o755 },
      { path: DESKTOP_SERVICE_PATH, content: service, mode: 0o644 },
    ],
    diskSizeGiB: 3,
  };
}

/**
 * The docker template's image: Debian's docker.io (20.10), containerd, runc, iptables (nft), docker-compose (v1,
 * run by `docker compose` through a CLI plugin) and a static busybox, plus `start-docker`, which loads the kernel
 * modules Docker needs and starts containerd and dockerd in the VM its snapshot is made of. The modules (overlay,
 * bridge, veth, netfilter; `docker/modules.txt`) are taken from the kernel the image boots, `kernelVersion` (default:
 * the one `ensureGuestImage` picks), and shipped in the image rather than in the initramfs every VM loads. The disk
 * is 4 GiB (sparse) for the images users build.
 */
export async function dockerFlavour(recipesDir: string = defaultRecipesDir(), kernelVersion?: string): Promise<ImageFlavour> {
  const [packages, moduleList, startScript, composePlugin, daemonConfig, kernel] = await Promise.all([
    readInput(join(recipesDir, 'docker/packages.txt')),
    readInput(join(recipesDir, 'docker/modules.txt')),
    readInput(join(recipesDir, 'docker/start-docker')),
    readInput(join(recipesDir, 'docker/compose-plugin')),
    readInput(join(recipesDir, 'docker/daemon.json')),
    findHostKernel(kernelVersion),
  ]);
  const requests = parseList(moduleList).map((entry) => (entry.startsWith('?') ? { name: entry.slice(1), optional: true } : { name: entry, optional: false }));
  const plan = await resolveKernelModules(kernel.modulesDir, requests);
  const modules: FlavourFile[] = await Promise.all(
    plan.load.map(async (module) => {
      if (!module.path.endsWith('.ko')) {
        throw new ImageBuildError(
          'IMAGE_INPUT_INVALID',
          `kernel module ${module.path} is compressed; busybox's insmod in the docker image loads plain .ko files`,
        );
      }
      return { path: `${DOCKER_MODULES_DIR}/${module.name}.ko`, content: await readInput(module.path), mode: 0o644 };
    }),
  );
  return {
    name: 'docker',
    packages: parseList(packages),
    files: [
      { path: DOCKER_START_PATH, content: startScript, mode: 0o755 },
      { path: '/usr/libexec/docker/cli-plugins/docker-compose', content: composePlugin, mode: 0o755 },
      { path: '/etc/docker/daemon.json', content: daemonConfig, mode: 0o644 },
      { path: `${DOCKER_MODULES_DIR}/load-order`, content: Buffer.from(plan.load.map((module) => `${module.name}\n`).join('')), mode: 0o644 },
      ...modules,
    ],
    diskSizeGiB: 4,
  };
}

/** The built-in flavours by name (the image CLI's `--flavour`). */
export const FLAVOURS: Record<string, () => Promise<ImageFlavour>> = {
  browser: () => browserFlavour(),
  desktop: () => desktopFlavour(),
  docker: () => dockerFlavour(),
};
