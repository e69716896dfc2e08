import { chmod, mkdir, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { runCommand } from '../run-command.ts';
import { isExecutableInTree, realDirInTree, resolveInTree } from './guest-paths.ts';
import { GUEST_RUNTIME } from './runtime-layer.ts';
import type { OciImageConfig } from './types.ts';

/** Where the build puts the agent and what guest-init reads, in the guest. */
export const FOREIGN_GUEST_FILES = {
  agent: '/opt/sandboxd/agent.mjs',
  init: '/opt/sandboxd/guest-init',
  args: '/opt/sandboxd/agent-args',
  env: '/opt/sandboxd/image-env.json',
} as const;

/** Directories the boot mounts over or moves into: they must be real directories of the tree. */
const MOUNT_POINTS = ['/dev', '/proc', '/sys', '/tmp', '/run'];
/** Files guest-init writes in /run at every boot; the tree's /etc entries become symlinks there. */
const RUN_FILES = ['resolv.conf', 'hosts', 'machine-id'];
/** Oldest image Python the agent's kernel is run on; an older one (or none) leaves the user on the runtime's. */
const MIN_USER_PYTHON = [3, 6] as const;
/** A path that goes into guest-init's argument file unquoted and one per line. */
const SAFE_PATH = /^\/[A-Za-z0-9._+/-]*$/;
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** What the build chose for the agent, recorded in the manifest. */
export interface InjectedRuntime {
  /** The interpreter of the user's stateful Python: the image's own `python3`, else the runtime's. */
  userPython: string;
  userPythonSource: 'image' | 'runtime';
  /** The shell of exec commands: the image's bash, else its sh, else the runtime's busybox sh. */
  shell: string;
}

/** Inputs of the `runtime` step. */
export interface InjectRuntimeInput {
  tree: string;
  runtimeTar: string;
  agentBundle: Buffer;
  guestInit: Buffer;
  config: OciImageConfig;
  signal?: AbortSignal;
}

/**
 * The `runtime` step: makes an unpacked OCI root filesystem bootable by sandboxd without changing anything the
 * image's programs use. Everything goes below `/opt/sandboxd` (the runtime, the agent, guest-init, the agent's
 * arguments and the image's Env as JSON), plus: the mount points the boot needs become real directories, `/root`
 * exists, and `/etc/{resolv.conf,hosts,machine-id}` link into `/run`, as in the default image.
 */
export async function injectRuntime(input: InjectRuntimeInput): Promise<InjectedRuntime> {
  const { tree } = input;
  for (const point of MOUNT_POINTS) await realDirInTree(tree, point, () => true);
  await realDirInTree(tree, '/root', () => false);
  // An image's own /opt/sandboxd is replaced whole, so no symlink of the image's is ever written through.
  const home = join(await realDirInTree(tree, dirname(GUEST_RUNTIME.home), () => false), basename(GUEST_RUNTIME.home));
  await rm(home, { recursive: true, force: true });
  await mkdir(home, { mode: 0o755 });
  await runCommand('tar', ['--extract', '--file', input.runtimeTar, '--directory', home, '--numeric-owner', '--preserve-permissions'], {
    signal: input.signal,
  });

  await writeFile(join(tree, FOREIGN_GUEST_FILES.agent), input.agentBundle, { mode: 0o644 });
  await writeFile(join(tree, FOREIGN_GUEST_FILES.init), input.guestInit);
  await chmod(join(tree, FOREIGN_GUEST_FILES.init), 0o755);

  const etc = await realDirInTree(tree, '/etc', () => false);
  for (const file of RUN_FILES) {
    await rm(join(etc, file), { recursive: true, force: true });
    await symlink(`/run/${file}`, join(etc, file));
  }

  const path = input.config.env.PATH ?? DEFAULT_PATH;
  const imagePython = await findImagePython(tree, path);
  const chosen: InjectedRuntime = {
    userPython: imagePython ?? GUEST_RUNTIME.python,
    userPythonSource: imagePython ? 'image' : 'runtime',
    shell: (await firstExecutable(tree, ['/bin/bash', '/bin/sh'])) ?? GUEST_RUNTIME.shell,
  };
  const args = ['--python', chosen.userPython, '--helper-python', GUEST_RUNTIME.python, '--shell', chosen.shell, '--env-file', FOREIGN_GUEST_FILES.env];
  await writeFile(join(tree, FOREIGN_GUEST_FILES.args), `${args.join('\n')}\n`, { mode: 0o644 });
  await writeFile(join(tree, FOREIGN_GUEST_FILES.env), `${JSON.stringify(input.config.env)}\n`, { mode: 0o644 });
  return chosen;
}

/**
 * The image's `python3` on its PATH, if it is executable and not older than 3.6 (its version is read from the
 * name the link resolves to, `python3.N`, or from a `lib/python3.N` directory beside it). The image's code is
 * never run on the host to find out.
 */
async function findImagePython(tree: string, path: string): Promise<string | undefined> {
  for (const dir of path.split(':')) {
    if (!dir.startsWith('/')) continue;
    const candidate = `${dir.replace(/\/+$/, '')}/python3`;
    if (!SAFE_PATH.test(candidate)) continue;
    const found = await isExecutableInTree(tree, candidate);
    if (!found) continue;
    const version = await pythonVersion(tree, found.guestPath);
    if (version && (version[0] < MIN_USER_PYTHON[0] || (version[0] === MIN_USER_PYTHON[0] && version[1] < MIN_USER_PYTHON[1]))) return undefined;
    return candidate;
  }
  return undefined;
}

async function pythonVersion(tree: string, resolvedGuestPath: string): Promise<[number, number] | undefined> {
  const named = /python(\d+)\.(\d+)$/.exec(basename(resolvedGuestPath));
  if (named) return [Number(named[1]), Number(named[2])];
  const lib = await resolveInTree(tree, `${dirname(dirname(resolvedGuestPath))}/lib`);
  if (!lib?.stats.isDirectory()) return undefined;
  for (const entry of await readdir(lib.hostPath).catch(() => [] as string[])) {
    const match = /^python(\d+)\.(\d+)$/.exec(entry);
    if (match) return [Number(match[1]), Number(match[2])];
  }
  return undefined;
}

async function firstExecutable(tree: string, candidates: readonly string[]): Promise<string | undefined> {
  for (const candidate of candidates) if (await isExecutableInTree(tree, candidate)) return candidate;
  return undefined;
}
