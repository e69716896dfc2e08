import { chmod, copyFile, cp, mkdir, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import { BASE_FILES } from '../base-layer.ts';
import { installedVersions } from '../dpkg-status.ts';
import { ImageBuildError } from '../errors.ts';
import { hashInputs, sha256File } from '../hashing.ts';
import { ensureLayer } from '../layer-store.ts';
import type { ProgressReporter } from '../progress.ts';
import { runCommand } from '../run-command.ts';

/**
 * Bump when the build below changes what the runtime holds (its hash also covers the base layer and busybox).
 */
const RUNTIME_RECIPE_VERSION = 1;

/** Where the runtime lives in a guest; `images/rootfs/foreign-guest-init` and the agent's arguments use these. */
export const GUEST_RUNTIME = {
  /** Everything sandboxd adds to a foreign root filesystem is below this directory. */
  home: '/opt/sandboxd',
  root: '/opt/sandboxd/runtime',
  /** Debian's dynamic loader: every runtime program is started through it, never through the image's. */
  loader: '/opt/sandboxd/runtime/lib/ld-linux-x86-64.so.2',
  libDir: '/opt/sandboxd/runtime/lib',
  python: '/opt/sandboxd/runtime/bin/python3',
  shell: '/opt/sandboxd/runtime/bin/sh',
  /**
   * Debian's node loads five of its built-in modules from `/usr/share/nodejs/` at start (they are "externalized"
   * to Debian packages). A foreign root has no such files, so libnode's copy of those paths is rewritten to this
   * directory, which has the same length.
   */
  nodeBuiltins: '/opt/sandboxd/njs/',
} as const;

const DEBIAN_NODE_BUILTINS = '/usr/share/nodejs/';
/** Bytes a whole path may follow in libnode: NUL (a C string), `"` or `=` (the `process.config` text). */
const PATH_STARTS_AFTER = new Set([0, 0x22, 0x3d]);
const LIB_DIR = 'usr/lib/x86_64-linux-gnu';
const LOADER = 'usr/lib64/ld-linux-x86-64.so.2';
/** Parts of the standard library nothing in the agent or a notebook needs: tests, GUIs, 2to3, pip's bootstrap. */
const PYTHON_STDLIB_LEFT_OUT = new Set(['test', 'idlelib', 'tkinter', 'turtledemo', 'lib2to3', 'ensurepip', 'pydoc_data', 'distutils', 'EXTERNALLY-MANAGED']);

/** File names inside a runtime layer directory. */
export const RUNTIME_FILES = { tar: 'runtime.tar', info: 'runtime.json' } as const;

/** Inputs of the runtime layer. */
export interface RuntimeLayerInput {
  cacheDir: string;
  baseHash: string;
  /** Builds the base layer if needed; resolves its directory. */
  ensureBase: () => Promise<string>;
  /** The host's static busybox (the kernel layer's). */
  busyboxPath: string;
  progress: ProgressReporter;
  lockTimeoutMs: number;
}

/** The runtime layer's hash: the base layer it is taken from, busybox and this recipe's version. */
export async function hashRuntimeLayer(baseHash: string, busyboxPath: string): Promise<string> {
  return hashInputs([
    ['layer', 'oci-runtime'],
    ['recipe-version', String(RUNTIME_RECIPE_VERSION)],
    ['base-layer', baseHash],
    ['busybox-sha256', await sha256File(busyboxPath)],
  ]);
}

/** What `runtime.json` records. */
export interface RuntimeInfo {
  baseHash: string;
  node: string;
  python: string;
  /** Bytes of the unpacked runtime. */
  bytes: number;
  libraries: string[];
}

/**
 * The `oci-runtime` layer: a self-contained runtime for root filesystems sandboxd did not build, as a tarball to
 * unpack at `/opt/sandboxd` (`runtime/` and `njs/`). It holds Debian's node and python3 (with its standard
 * library) from the base layer, with the shared libraries they and Python's extension modules load and Debian's
 * dynamic loader, plus tini-static and the host's static busybox. Nothing in it uses the image's libc: programs
 * start as `ld-linux-x86-64.so.2 --library-path <runtime>/lib <program>`. Built once per base layer (~10 s).
 */
export async function ensureRuntimeLayer(input: RuntimeLayerInput): Promise<{ dir: string; hash: string }> {
  const hash = await hashRuntimeLayer(input.baseHash, input.busyboxPath);
  const layer = await ensureLayer({
    cacheDir: input.cacheDir,
    layer: 'oci-runtime',
    hash,
    progress: input.progress,
    lockTimeoutMs: input.lockTimeoutMs,
    build: async (dir) => {
      const baseDir = await input.ensureBase();
      await input.progress.stage('oci-runtime', 'assemble', () => buildRuntime(join(baseDir, BASE_FILES.rootfs), input, dir));
    },
  });
  return { dir: layer.dir, hash };
}

async function buildRuntime(baseTar: string, input: RuntimeLayerInput, dir: string): Promise<void> {
  const base = join(dir, 'base');
  const out = join(dir, 'tree');
  const runtime = join(out, relative(GUEST_RUNTIME.home, GUEST_RUNTIME.root));
  await mkdir(base);
  await runCommand('tar', [
    '--extract',
    '--file',
    baseTar,
    '--directory',
    base,
    '--numeric-owner',
    '--wildcards',
    './usr/bin/node',
    './usr/bin/python3*',
    './usr/bin/tini-static',
    `./${LIB_DIR}`,
    './usr/lib64',
    './usr/lib/python3.*',
    './usr/share/nodejs',
    './var/lib/dpkg/status',
  ]);

  const python = await readlink(join(base, 'usr/bin/python3')); // python3.11
  if (!/^python3\.\d+$/.test(python)) throw new ImageBuildError('IMAGE_INPUT_INVALID', `unexpected /usr/bin/python3 -> ${python} in the base layer`);
  const programs = [join(base, 'usr/bin/node'), join(base, 'usr/bin', python)];
  const dynload = join(base, 'usr/lib', python, 'lib-dynload');
  const extensions = (await readdir(dynload)).filter((name) => name.endsWith('.so')).map((name) => join(dynload, name));
  const libraries = await sharedLibraryClosure(base, [...programs, ...extensions]);

  await Promise.all(['bin', 'lib', 'libexec'].map((sub) => mkdir(join(runtime, sub), { recursive: true })));
  for (const library of libraries) await copyFile(library, join(runtime, 'lib', basename(library)));
  await copyFile(join(base, LOADER), join(runtime, 'lib', basename(LOADER)));
  await chmod(join(runtime, 'lib', basename(LOADER)), 0o755);
  for (const program of programs) {
    await copyFile(program, join(runtime, 'libexec', basename(program)));
    await chmod(join(runtime, 'libexec', basename(program)), 0o755);
  }
  // The standard library where Python looks for it from bin/python3 (its prefix is the runtime root).
  await cp(join(base, 'usr/lib', python), join(runtime, 'lib', python), {
    recursive: true,
    verbatimSymlinks: true,
    filter: (source) => !PYTHON_STDLIB_LEFT_OUT.has(relative(join(base, 'usr/lib', python), source)),
  });
  await redirectNodeBuiltins(base, join(runtime, 'lib', 'libnode.so.108'), join(out, relative(GUEST_RUNTIME.home, GUEST_RUNTIME.nodeBuiltins)));

  await copyFile(join(base, 'usr/bin/tini-static'), join(runtime, 'bin', 'tini'));
  await copyFile(input.busyboxPath, join(runtime, 'bin', 'busybox'));
  await chmod(join(runtime, 'bin', 'tini'), 0o755);
  await chmod(join(runtime, 'bin', 'busybox'), 0o755);
  await symlink('busybox', join(runtime, 'bin', 'sh'));
  await writeLauncher(join(runtime, 'bin', 'python3'), `${GUEST_RUNTIME.root}/libexec/${python}`);
  await writeLauncher(join(runtime, 'bin', 'node'), `${GUEST_RUNTIME.root}/libexec/node`);

  const versions = await installedVersions(join(base, 'var/lib/dpkg/status'), ['nodejs', python]);
  await rm(base, { recursive: true });
  await runCommand('tar', ['--create', '--file', join(dir, RUNTIME_FILES.tar), '--directory', out, '--numeric-owner', '--owner=0', '--group=0', '.']);
  const info: RuntimeInfo = {
    baseHash: input.baseHash,
    node: versions.nodejs ?? 'unknown',
    python: `${python} ${versions[python] ?? ''}`.trim(),
    bytes: Number((await runCommand('du', ['--summarize', '--bytes', out])).split('\t')[0]),
    libraries: libraries.map((library) => basename(library)).sort(),
  };
  await rm(out, { recursive: true });
  await writeFile(join(dir, RUNTIME_FILES.info), `${JSON.stringify(info, null, 2)}\n`);
}

/**
 * The shared libraries `files` load, transitively, as the base's own dynamic loader finds them in the base's
 * library directory (`ld.so --list`, what ldd does: the libraries are mapped, nothing of them runs).
 */
async function sharedLibraryClosure(base: string, files: readonly string[]): Promise<string[]> {
  const found = new Set<string>();
  for (const file of files) {
    const listing = await runCommand(join(base, LOADER), ['--library-path', join(base, LIB_DIR), '--list', file]);
    for (const line of listing.split('\n')) {
      if (/not found/.test(line))
        throw new ImageBuildError('IMAGE_INPUT_INVALID', `${relative(base, file)} needs a library the base layer lacks: ${line.trim()}`);
      const path = /=> (\/\S+) \(/.exec(line)?.[1];
      if (path && basename(path) !== basename(LOADER)) found.add(path);
    }
  }
  return [...found].sort();
}

/**
 * Rewrites libnode's paths of Debian's externalized built-in modules (`/usr/share/nodejs/…`) to the same-length
 * `/opt/sandboxd/njs/…` and copies those files there. Same length, so no offset in the library moves; each
 * occurrence must be a whole path (a C string, or a value in the build configuration node embeds as
 * `process.config`), checked before it is changed, so an unexpected use fails the build.
 */
async function redirectNodeBuiltins(base: string, libnode: string, targetDir: string): Promise<void> {
  const from = Buffer.from(DEBIAN_NODE_BUILTINS);
  const to = Buffer.from(GUEST_RUNTIME.nodeBuiltins);
  if (from.length !== to.length) throw new Error('the node built-in directory must keep its length');
  const bytes = await readFile(libnode);
  const paths = new Set<string>();
  for (let at = bytes.indexOf(from); at >= 0; at = bytes.indexOf(from, at + from.length)) {
    // Each use is a whole path: a C string of its own (the loader's) or a value in the embedded build config.
    const path = /^\/usr\/share\/nodejs\/[\w./-]+?\.js(?=\0|")/.exec(bytes.subarray(at, at + 256).toString('latin1'))?.[0];
    if (!path || !PATH_STARTS_AFTER.has(bytes[at - 1] ?? -1)) {
      throw new ImageBuildError(
        'IMAGE_INPUT_INVALID',
        `libnode uses ${DEBIAN_NODE_BUILTINS} in an unexpected way ("${bytes.subarray(at - 16, at + 80).toString('latin1')}")`,
      );
    }
    paths.add(path.slice(from.length));
    to.copy(bytes, at);
  }
  if (paths.size === 0) throw new ImageBuildError('IMAGE_INPUT_INVALID', `libnode names no file in ${DEBIAN_NODE_BUILTINS}; the runtime recipe needs a look`);
  await writeFile(libnode, bytes);
  for (const path of paths) {
    await mkdir(dirname(join(targetDir, path)), { recursive: true });
    await copyFile(join(base, 'usr/share/nodejs', path), join(targetDir, path));
  }
}

/**
 * A launcher script run by the runtime's busybox sh: starts `program` through the runtime's loader and libraries,
 * with `argv[0]` the launcher's own path, so Python finds its prefix (and `sys.executable` works again) from it.
 */
async function writeLauncher(path: string, program: string): Promise<void> {
  const script = `#!${GUEST_RUNTIME.shell}\nexec ${GUEST_RUNTIME.loader} --library-path ${GUEST_RUNTIME.libDir} --argv0 "$0" ${program} "$@"\n`;
  await writeFile(path, script, { mode: 0o755 });
}
