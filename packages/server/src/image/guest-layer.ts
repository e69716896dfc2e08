import { chmod, chown, copyFile, link, mkdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { BASE_FILES, GUEST_SUITE } from './base-layer.ts';
import { installedVersions } from './dpkg-status.ts';
import { createExt4Image } from './ext4-image.ts';
import { hashInputs, sha256 } from './hashing.ts';
import { KERNEL_FILES } from './kernel-layer.ts';
import type { ProgressReporter } from './progress.ts';
import type { Recipes } from './recipes.ts';
import type { ImageFlavour } from './types.ts';
import { runCommand } from './run-command.ts';

/**
 * Bump when the build code changes what this layer contains (3: /etc/machine-id in /run; 4: with 3's ext4
 * `discard` default mount option from another branch, so images of either half are not reused; 5: a `python`
 * command; 6: the `user` account; 7: a login profile that starts no program, see `quietLoginProfile`).
 */
const GUEST_RECIPE_VERSION = 7;

/**
 * Version of the boot contract in packages/server/images/README.md (kernel command line, stage markers,
 * root disk, agent path). Bump it on any incompatible change so drivers can refuse images they don't speak.
 */
export const BOOT_CONTRACT_VERSION = 1;

/** Where the agent bundle is installed in the guest. */
export const GUEST_AGENT_PATH = '/opt/sandboxd/agent.mjs';

/** File names inside a guest image directory. */
export const GUEST_FILES = { kernel: 'vmlinux', initrd: 'initrd.cpio.gz', rootfs: 'rootfs.ext4', manifest: 'manifest.json' } as const;

/** Contents of `manifest.json`. */
export interface GuestImageManifest {
  schemaVersion: 1;
  bootContractVersion: number;
  hash: string;
  kernelVersion: string;
  builtAt: string;
  buildMs: number;
  files: {
    kernel: { name: string; bytes: number };
    initrd: { name: string; bytes: number };
    /** `bytes` is the virtual size; `allocatedBytes` what the sparse file really takes on disk. */
    rootfs: { name: string; bytes: number; allocatedBytes: number };
  };
  layers: { kernel: string; base: string };
  inputs: {
    agentSha256: string;
    guestInitSha256: string;
    diskSizeGiB: number;
    suite: string;
    packages: string[];
    sources: string[];
  };
  /** Versions of key guest packages, from the rootfs' dpkg database. */
  guestPackages: Record<string, string>;
}

/** Inputs of the guest layer. */
export interface GuestLayerInput {
  kernelHash: string;
  kernelDir: string;
  kernelVersion: string;
  baseHash: string;
  baseDir: string;
  recipes: Recipes;
  sources: string[];
  agentBundle: Buffer;
  diskSizeGiB: number;
  /** What a flavour adds (its name and files); none for the default image. */
  flavour?: Pick<ImageFlavour, 'name' | 'files'>;
}

/** The guest layer's hash: both lower layers' hashes, the agent bundle, guest-init, fstab and the disk size. */
export function hashGuestLayer(input: Pick<GuestLayerInput, 'kernelHash' | 'baseHash' | 'agentBundle' | 'recipes' | 'diskSizeGiB' | 'flavour'>): string {
  const flavour: [string, string | Buffer][] = input.flavour
    ? [['flavour', input.flavour.name], ...input.flavour.files.map((file): [string, Buffer] => [`file:${file.path}:${file.mode.toString(8)}`, file.content])]
    : [];
  return hashInputs([
    ['layer', 'guest'],
    ['recipe-version', String(GUEST_RECIPE_VERSION)],
    ['boot-contract', String(BOOT_CONTRACT_VERSION)],
    ['kernel-layer', input.kernelHash],
    ['base-layer', input.baseHash],
    ['agent-bundle', input.agentBundle],
    ['rootfs/guest-init', input.recipes.guestInit],
    ['rootfs/fstab', input.recipes.fstab],
    ['disk-size-gib', String(input.diskSizeGiB)],
    ...flavour,
  ]);
}

/**
 * Builds the final image into `dir`: unpacks the base tarball, adds the agent and guest-init, writes the tree
 * into a sparse ext4 image, hard-links the kernel files next to it and writes `manifest.json`.
 */
export async function buildGuestLayer(input: GuestLayerInput, hash: string, dir: string, progress: ProgressReporter): Promise<void> {
  const startMs = progress.elapsedMs();
  const tree = join(dir, 'rootfs-tree');
  await progress.stage('guest', 'unpack base', async () => {
    await mkdir(tree);
    // --numeric-owner: ownership must come from the tarball's uids, not from the host's /etc/passwd.
    await runCommand('tar', [
      '--extract',
      '--file',
      join(input.baseDir, BASE_FILES.rootfs),
      '--directory',
      tree,
      '--numeric-owner',
      '--preserve-permissions',
      '--xattrs',
      '--xattrs-include=*',
    ]);
  });
  const guestPackages = await progress.stage('guest', 'install agent', async () => {
    await mkdir(join(tree, 'opt/sandboxd'), { recursive: true });
    await writeFile(join(tree, GUEST_AGENT_PATH), input.agentBundle, { mode: 0o644 });
    await writeFile(join(tree, 'sbin/guest-init'), input.recipes.guestInit);
    await chmod(join(tree, 'sbin/guest-init'), 0o755);
    await writeFile(join(tree, 'etc/fstab'), input.recipes.fstab, { mode: 0o644 });
    // guest-init writes the nameserver, the host name and a machine id into /run (a tmpfs) at every boot, so the
    // image itself never changes; and renaming a restored clone (or giving it its own machine id) rewrites these
    // files in memory, not through ext4's journal (~60 ms of the identity fix-up under TCG).
    for (const file of input.flavour?.files ?? []) {
      const target = join(tree, file.path);
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, file.content);
      await chmod(target, file.mode);
    }
    for (const file of ['resolv.conf', 'hosts', 'machine-id']) {
      await rm(join(tree, 'etc', file), { force: true });
      await symlink(`/run/${file}`, join(tree, 'etc', file));
    }
    // `python` runs python3, as Debian's python-is-python3 makes it (users and the published clients' examples run
    // `python script.py`); made here, not by that package, so the base layer (mmdebstrap) is not rebuilt for a link.
    await symlink('python3', join(tree, 'usr/bin/python')).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    await quietLoginProfile(tree);
    await addUnprivilegedUser(tree);
    return installedVersions(join(tree, 'var/lib/dpkg/status'), ['nodejs', 'python3', 'python3-pip', 'tini', 'curl', 'git', 'bash']);
  });
  await progress.stage('guest', 'mkfs.ext4', async (onLine) => {
    await createExt4Image(tree, join(dir, GUEST_FILES.rootfs), {
      sizeBytes: input.diskSizeGiB * 1024 ** 3,
      label: 'sandboxd-root',
      uuid: uuidFromHash(sha256(hash)),
      onLine,
    });
    await rm(tree, { recursive: true });
  });
  await progress.stage('guest', 'link kernel', async () => {
    await linkOrCopy(join(input.kernelDir, KERNEL_FILES.vmlinux), join(dir, GUEST_FILES.kernel));
    await linkOrCopy(join(input.kernelDir, KERNEL_FILES.initrd), join(dir, GUEST_FILES.initrd));
  });

  const [kernel, initrd, rootfs] = await Promise.all([
    stat(join(dir, GUEST_FILES.kernel)),
    stat(join(dir, GUEST_FILES.initrd)),
    stat(join(dir, GUEST_FILES.rootfs)),
  ]);
  const manifest: GuestImageManifest = {
    schemaVersion: 1,
    bootContractVersion: BOOT_CONTRACT_VERSION,
    hash,
    kernelVersion: input.kernelVersion,
    builtAt: new Date().toISOString(),
    buildMs: progress.elapsedMs() - startMs,
    files: {
      kernel: { name: GUEST_FILES.kernel, bytes: kernel.size },
      initrd: { name: GUEST_FILES.initrd, bytes: initrd.size },
      rootfs: { name: GUEST_FILES.rootfs, bytes: rootfs.size, allocatedBytes: rootfs.blocks * 512 },
    },
    layers: { kernel: input.kernelHash, base: input.baseHash },
    inputs: {
      agentSha256: sha256(input.agentBundle),
      guestInitSha256: sha256(input.recipes.guestInit),
      diskSizeGiB: input.diskSizeGiB,
      suite: GUEST_SUITE,
      packages: input.recipes.packages,
      sources: input.sources,
    },
    guestPackages,
  };
  await writeFile(join(dir, GUEST_FILES.manifest), `${JSON.stringify(manifest, null, 2)}\n`);
}

/** Reads a finished image's manifest. */
export async function readManifest(dir: string): Promise<GuestImageManifest> {
  return JSON.parse(await readFile(join(dir, GUEST_FILES.manifest), 'utf8')) as GuestImageManifest;
}

/** A hard link shares the kernel layer's bytes (same filesystem); a copy is the fallback. */
async function linkOrCopy(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
  } catch {
    await copyFile(from, to);
  }
}

/** Formats 32 hex digits as an RFC 4122 version-4-shaped UUID. */
export function uuidFromHash(hex: string): string {
  const h = hex.slice(0, 32).split('');
  h[12] = '4';
  h[16] = ((parseInt(h[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
  const s = h.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20, 32)}`;
}

/** The account programs run as when a request names `user: "user"` (E2B's default user; no sudo, no password). */
export const GUEST_USER = { name: 'user', uid: 1000, gid: 1000, home: '/home/user' } as const;

/**
 * Adds {@link GUEST_USER} to the tree: a passwd, group and (locked) shadow entry, and a home made from
 * `/etc/skel`. Done here, as `python` is, so that the base layer (mmdebstrap) is not rebuilt for an account.
 */
/**
 * Every shell command runs in a login shell (`bash -lc`, or a spare one that reads the profile at command time, see
 * the agent's spare-shells.ts), so what Debian's login profile starts is paid by every command: `/etc/profile`
 * runs `id -u` to choose root's PATH, and `~/.profile` runs `mesg n`; under TCG each of those programs costs
 * ~45 ms. Both are rewritten to do the same thing without a program where bash can: the effective uid is bash's
 * `$EUID` (other shells, which lack it, still run `id -u`), and `mesg` only acts on a terminal (without one it fails
 * and the profile ignores the failure), so it runs only when standard input is one.
 */
async function quietLoginProfile(tree: string): Promise<void> {
  const rewrite = async (file: string, from: string, to: string): Promise<void> => {
    const path = join(tree, file);
    const text = await readFile(path, 'utf8').catch(() => null);
    if (text?.includes(from)) await writeFile(path, text.replaceAll(from, to));
  };
  await rewrite('etc/profile', '[ "$(id -u)" -eq 0 ]', '[ "${EUID:-$(id -u)}" -eq 0 ]');
  for (const file of ['root/.profile', 'etc/skel/.profile']) {
    await rewrite(file, 'mesg n 2> /dev/null || true', 'if [ -t 0 ]; then mesg n 2> /dev/null || true; fi');
  }
}

async function addUnprivilegedUser(tree: string): Promise<void> {
  const { name, uid, gid, home } = GUEST_USER;
  const passwd = await readFile(join(tree, 'etc/passwd'), 'utf8');
  if (passwd.split('\n').some((line) => line.startsWith(`${name}:`))) return;
  const append = async (file: string, line: string): Promise<void> => {
    const path = join(tree, 'etc', file);
    const text = await readFile(path, 'utf8');
    await writeFile(path, `${text.endsWith('\n') || text === '' ? text : `${text}\n`}${line}\n`);
  };
  await append('passwd', `${name}:x:${uid}:${gid}::${home}:/bin/bash`);
  await append('group', `${name}:x:${gid}:`);
  await append('shadow', `${name}:!:19000:0:99999:7:::`);
  const homeDir = join(tree, home.slice(1));
  await mkdir(homeDir, { recursive: true });
  for (const file of ['.bashrc', '.profile', '.bash_logout']) {
    await copyFile(join(tree, 'etc/skel', file), join(homeDir, file)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
    await chown(join(homeDir, file), uid, gid).catch(() => undefined);
  }
  await chown(homeDir, uid, gid);
  await chmod(homeDir, 0o750);
}
