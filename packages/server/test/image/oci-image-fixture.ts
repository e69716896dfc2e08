// test-lane: heavy (builds OCI images with umoci from the guest base layer): scripts/run-tests.mjs runs what imports this one at a time.
/**
 * Test fixture: OCI images the tests build themselves, as OCI layouts made with umoci (no Docker, no network):
 * - `debian`: the default image's cached base-layer tarball (bookworm with python3, git, bash) as one layer,
 *   plus a layer that deletes `/etc/motd` (a whiteout) and adds a file, with an Env and a WorkingDir;
 * - `busybox`: only busybox-static's binary and a few applet links: no libc, no node, no python3, no bash.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BASE_FILES } from '../../src/image/base-layer.ts';
import { defaultCacheDir } from '../../src/image/index.ts';
import { resolveLowerLayers } from '../../src/image/lower-layers.ts';
import { ProgressReporter } from '../../src/image/progress.ts';
import { runCommand } from '../../src/image/run-command.ts';

/** The images' tags in their layouts. */
export const DEBIAN_TAG = 'debian';

/**
 * The tarball of the base every image shares (rootfs/packages.txt: bash, git, python3…; the OCI runtime is taken
 * from it too), for a Debian test image: not the default image's own base, whose data-analysis packages would make
 * a 1.3 GB test image (21 s more to unpack in a template build).
 */
export async function commonBaseTar(): Promise<string> {
  const common = await resolveLowerLayers({ cacheDir: defaultCacheDir(), lockTimeoutMs: 600_000, base: 'common' }, new ProgressReporter());
  return join(await common.ensureBase(), BASE_FILES.rootfs);
}
export const BUSYBOX_TAG = 'busybox';
/** The file the Debian image's second layer adds, and its content. */
export const ADDED_FILE = '/etc/sandboxd-test-layer';
export const ADDED_TEXT = 'added by the second layer';

/** A scratch OCI layout holding the test images. */
export interface TestLayout {
  dir: string;
  remove(): Promise<void>;
}

export async function createLayout(): Promise<TestLayout> {
  const root = await mkdtemp(join(tmpdir(), 'sandboxd-oci-layout-'));
  const dir = join(root, 'layout');
  await runCommand('umoci', ['init', '--layout', dir]);
  return { dir, remove: () => rm(root, { recursive: true, force: true }) };
}

/** Adds the Debian image, made from the base layer's `rootfs.tar` (~400 MiB; gzip makes this take ~20 s). */
export async function addDebianImage(layout: TestLayout, baseTarPath: string): Promise<void> {
  const image = `${layout.dir}:${DEBIAN_TAG}`;
  await runCommand('umoci', ['new', '--image', image]);
  await runCommand('umoci', ['raw', 'add-layer', '--image', image, baseTarPath]);
  const scratch = await mkdtemp(join(tmpdir(), 'sandboxd-oci-layer-'));
  try {
    // An OCI whiteout: `.wh.<name>` deletes <name> of the layers below.
    await mkdir(join(scratch, 'tree', 'etc'), { recursive: true });
    await writeFile(join(scratch, 'tree', 'etc', '.wh.motd'), '');
    await writeFile(join(scratch, 'tree', ADDED_FILE.slice(1)), `${ADDED_TEXT}\n`);
    await runCommand('tar', [
      '--create',
      '--file',
      join(scratch, 'layer.tar'),
      '--directory',
      join(scratch, 'tree'),
      '--owner=0',
      '--group=0',
      '--numeric-owner',
      'etc',
    ]);
    await runCommand('umoci', ['raw', 'add-layer', '--image', image, join(scratch, 'layer.tar')]);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  await runCommand('umoci', [
    'config',
    '--image',
    image,
    '--config.env',
    'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    '--config.env',
    'GREETING=hello from the image',
    // A home that does not exist: the agent still works in /root (its kernels start there).
    '--config.env',
    'HOME=/home/app',
    '--config.workingdir',
    '/srv',
    '--config.cmd',
    '/bin/bash',
  ]);
}

/** Adds the busybox-only image (static busybox from the host's busybox-static). */
export async function addBusyboxImage(layout: TestLayout): Promise<void> {
  const image = `${layout.dir}:${BUSYBOX_TAG}`;
  const scratch = await mkdtemp(join(tmpdir(), 'sandboxd-oci-layer-'));
  try {
    const bin = join(scratch, 'tree', 'bin');
    await mkdir(bin, { recursive: true });
    await runCommand('cp', ['/bin/busybox', join(bin, 'busybox')]);
    for (const applet of ['sh', 'ls', 'cat', 'echo', 'id', 'ip', 'env']) await symlink('busybox', join(bin, applet));
    await runCommand('tar', [
      '--create',
      '--file',
      join(scratch, 'layer.tar'),
      '--directory',
      join(scratch, 'tree'),
      '--owner=0',
      '--group=0',
      '--numeric-owner',
      'bin',
    ]);
    await runCommand('umoci', ['new', '--image', image]);
    await runCommand('umoci', ['raw', 'add-layer', '--image', image, join(scratch, 'layer.tar')]);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  await runCommand('umoci', [
    'config',
    '--image',
    image,
    '--config.env',
    'PATH=/bin',
    '--config.env',
    'GREETING=hello from busybox',
    '--config.entrypoint',
    '/bin/sh',
  ]);
}
