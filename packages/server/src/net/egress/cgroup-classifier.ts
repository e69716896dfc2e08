/**
 * How the egress firewall recognises a VM: the cgroup v2 directory its QEMU runs in. nft resolves
 * `socket cgroupv2` paths below /sys/fs/cgroup and matches by the cgroup's depth in the v2 hierarchy, so a
 * directory is usable when it lies in a cgroup2 mount at or under /sys/fs/cgroup (pure v2 hosts: the VM's own
 * resource cgroup; hybrid hosts: a directory in the `unified` mount).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { EgressClassifier } from './ruleset.ts';

const NFT_CGROUP_ROOT = '/sys/fs/cgroup';

let mounts: Promise<string[]> | undefined;

/** The mount points of cgroup2 file systems, longest first (read once: they do not move under a running server). */
export function cgroup2Mounts(): Promise<string[]> {
  mounts ??= readFile('/proc/self/mounts', 'utf8')
    .catch(() => '')
    .then((text) =>
      text
        .split('\n')
        .map((line) => line.split(' '))
        .filter((fields) => fields[2] === 'cgroup2' && fields[1])
        .map((fields) => fields[1]!)
        .sort((a, b) => b.length - a.length),
    );
  return mounts;
}

/** The classifier of a cgroup directory, or null when nft cannot match it (not a v2 cgroup under /sys/fs/cgroup). */
export function classifierOf(cgroupDir: string, mounts: string[]): EgressClassifier | null {
  const dir = path.resolve(cgroupDir);
  const mount = mounts.find((m) => dir.startsWith(`${m}/`));
  if (!mount || !(mount === NFT_CGROUP_ROOT || mount.startsWith(`${NFT_CGROUP_ROOT}/`))) return null;
  const level = path.relative(mount, dir).split('/').length;
  return { cgroupPath: path.relative(NFT_CGROUP_ROOT, dir), level };
}
