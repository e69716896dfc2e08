import { createWriteStream } from 'node:fs';
import { chmod, copyFile, mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { ImageBuildError } from './errors.ts';
import type { ResolvedModule } from './kernel-modules.ts';
import { runCommand } from './run-command.ts';

/** Where /init finds the modules and the order to insmod them in (see images/initramfs/init). */
const MODULES_DIR = 'lib/sandboxd-modules';

/** Inputs of the initramfs. */
export interface InitramfsInput {
  /** A statically linked busybox (Debian's busybox-static); the initramfs has no libc. */
  busyboxPath: string;
  /** The /init script. */
  initScript: Buffer;
  /** Modules in load order. */
  modules: readonly ResolvedModule[];
}

/**
 * Builds the gzipped newc cpio initramfs: busybox with its applet links, the modules and a `load-order`
 * file, and `/init`. `stagingDir` must be empty; it holds the tree while the archive is written.
 */
export async function buildInitramfs(input: InitramfsInput, stagingDir: string, outputPath: string): Promise<void> {
  await assertStatic(input.busyboxPath);
  for (const dir of ['bin', 'dev', 'proc', 'sys', 'tmp', 'run', 'newroot', MODULES_DIR]) await mkdir(join(stagingDir, dir), { recursive: true });

  await copyFile(input.busyboxPath, join(stagingDir, 'bin/busybox'));
  await chmod(join(stagingDir, 'bin/busybox'), 0o755);
  const applets = (await runCommand(input.busyboxPath, ['--list'])).split('\n').filter((name) => /^[\w.[-]+$/.test(name) && name !== 'busybox');
  await Promise.all(applets.map((name) => symlink('busybox', join(stagingDir, 'bin', name))));

  for (const module of input.modules) await copyModule(module, join(stagingDir, MODULES_DIR, `${module.name}.ko`));
  await writeFile(join(stagingDir, MODULES_DIR, 'load-order'), input.modules.map((module) => `${module.name}\n`).join(''));
  await writeFile(join(stagingDir, 'init'), input.initScript, { mode: 0o755 });
  await chmod(join(stagingDir, 'init'), 0o755);

  // The kernel's unpacker does not create parent directories, so every directory precedes its contents.
  const entries = await listTree(stagingDir);
  const gzip = createGzip({ level: 9 });
  const written = pipeline(gzip, createWriteStream(outputPath));
  // -R 0:0: everything is owned by root in the guest, whoever runs the build.
  await runCommand('cpio', ['--create', '--format=newc', '--owner=0:0', '--reproducible', '--quiet'], {
    cwd: stagingDir,
    input: entries.map((entry) => `${entry}\n`).join(''),
    stdout: gzip,
  });
  await written;
}

/** Copies a module, decompressing `.ko.xz` (busybox insmod only loads plain ELF objects). */
async function copyModule(module: ResolvedModule, destination: string): Promise<void> {
  if (module.path.endsWith('.ko')) {
    await copyFile(module.path, destination);
  } else if (module.path.endsWith('.ko.xz')) {
    await runCommand('xz', ['--decompress', '--stdout', module.path], { stdout: createWriteStream(destination) });
  } else {
    throw new ImageBuildError('IMAGE_INPUT_INVALID', `unsupported module compression: ${module.path}`);
  }
}

/** All paths under `root`, relative, parents first, sorted for a stable archive. */
async function listTree(root: string, prefix = ''): Promise<string[]> {
  const result: string[] = [];
  const entries = await readdir(join(root, prefix), { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    result.push(relative);
    if (entry.isDirectory()) result.push(...(await listTree(root, relative)));
  }
  return result;
}

/**
 * Fails unless `path` is a statically linked ELF (no PT_INTERP program header). Debian's dynamic `busybox`
 * package also installs /bin/busybox; an initramfs with it would die at /init with no clear message.
 */
async function assertStatic(path: string): Promise<void> {
  let elf: Buffer;
  try {
    elf = await readFile(path);
  } catch (error) {
    throw new ImageBuildError('IMAGE_TOOL_MISSING', `${path} not found (apt-get install busybox-static)`, { cause: error });
  }
  const PT_INTERP = 3;
  const isElf64 = elf.readUInt32BE(0) === 0x7f454c46 && elf[4] === 2;
  if (!isElf64) throw new ImageBuildError('IMAGE_INPUT_INVALID', `${path} is not a 64-bit ELF executable`);
  const phoff = Number(elf.readBigUInt64LE(0x20));
  const phentsize = elf.readUInt16LE(0x36);
  const phnum = elf.readUInt16LE(0x38);
  for (let i = 0; i < phnum; i++) {
    if (elf.readUInt32LE(phoff + i * phentsize) === PT_INTERP) {
      throw new ImageBuildError('IMAGE_TOOL_MISSING', `${path} is dynamically linked; the initramfs needs busybox-static (apt-get install busybox-static)`);
    }
  }
}
