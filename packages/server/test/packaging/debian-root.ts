// test-lane: heavy (a Debian root made with mmdebstrap, and the server it installs running VMs)
/**
 * A fresh Debian root for the package test: made with mmdebstrap from the host's apt sources, entered with
 * chroot, with /proc, /sys and /dev of the host mounted in it (QEMU needs /dev/kvm and /dev/net/tun, the VMs their
 * cgroups) and, optionally, host folders bound in. `remove()` unmounts everything and deletes the root only when
 * nothing is mounted under it any more: a recursive delete through a bind mount of /dev or a cache would reach the
 * host's own files.
 */
import { spawn, spawnSync, type SpawnSyncOptions } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hostAptSources } from '../../src/image/apt-sources.ts';

function run(command: string, args: string[], options: SpawnSyncOptions = {}): string {
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options });
  if (result.error) throw new Error(`${command}: ${result.error.message}`);
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} exited with ${result.status ?? result.signal}:\n${String(result.stdout)}\n${String(result.stderr)}`);
  return String(result.stdout);
}

/** Mount points at or under `dir`, deepest first (from the kernel's own table). */
function mountsUnder(dir: string): string[] {
  return fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4]?.replace(/\\040/g, ' '))
    .filter((point): point is string => point !== undefined && (point === dir || point.startsWith(`${dir}/`)))
    .sort((a, b) => b.length - a.length);
}

export class DebianRoot {
  private constructor(readonly dir: string) {}

  /** mmdebstrap's minbase variant of `suite`, from the host's sources (its mirror or proxy); ~30 s here. */
  static async create(suite: string, log: (line: string) => void): Promise<DebianRoot> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-debroot-'));
    const sources = await hostAptSources(suite);
    log(`mmdebstrap --variant=minbase ${suite} (${sources.length} sources)`);
    run('mmdebstrap', ['--variant=minbase', '--quiet', suite, dir, ...sources]);
    const root = new DebianRoot(dir);
    root.mountHostSystem();
    return root;
  }

  private mountHostSystem(): void {
    run('mount', ['-t', 'proc', 'proc', path.join(this.dir, 'proc')]);
    for (const point of ['sys', 'dev']) {
      // rbind: /sys/fs/cgroup and /dev/pts are mounts of their own; rslave: unmounting here never reaches the host.
      run('mount', ['--rbind', `/${point}`, path.join(this.dir, point)]);
      run('mount', ['--make-rslave', path.join(this.dir, point)]);
    }
  }

  /** Binds the host folder `hostDir` at `inside` (a path in the root). */
  bind(hostDir: string, inside: string): void {
    const target = path.join(this.dir, inside);
    fs.mkdirSync(target, { recursive: true });
    run('mount', ['--bind', hostDir, target]);
  }

  /** Runs a command in the root (chroot), synchronously; answers its stdout, throws on failure. */
  exec(argv: string[], env: Record<string, string> = {}): string {
    return run('chroot', [this.dir, 'env', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), ...argv]);
  }

  /** Starts a command in the root (chroot) in the background. */
  spawn(argv: string[]) {
    return spawn('chroot', [this.dir, ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
  }

  /** Copies a host file into the root; answers its path inside. */
  copyIn(hostFile: string, insideDir = '/tmp'): string {
    const inside = path.posix.join(insideDir, path.basename(hostFile));
    fs.copyFileSync(hostFile, path.join(this.dir, inside));
    return inside;
  }

  read(inside: string): string {
    return fs.readFileSync(path.join(this.dir, inside), 'utf8');
  }

  /** Unmounts everything under the root (lazily if busy), then deletes it; refuses to delete while a mount remains. */
  remove(): void {
    for (const point of mountsUnder(this.dir)) {
      const result = spawnSync('umount', ['-R', point], { encoding: 'utf8' });
      if (result.status !== 0) spawnSync('umount', ['-R', '-l', point]);
    }
    const left = mountsUnder(this.dir);
    if (left.length > 0) throw new Error(`not deleting ${this.dir}: still mounted under it: ${left.join(', ')}`);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
