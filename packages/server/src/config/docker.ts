/** Settings of the built-in `docker` template (Docker inside a VM): its VMs' size. */
import { integer, type Setting, type SettingValues } from './kit.ts';

/** The settings of the docker block, by name (each name is unique across the blocks). */
export const dockerSettings = {
  dockerVcpus: {
    env: 'SANDBOXD_DOCKER_VCPUS',
    description: "vCPUs of every VM of the `docker` template (Docker inside the VM); the template's snapshot is made for it",
    parse: integer(1, 8),
    fallback: () => 2,
  },
  dockerMemoryMb: {
    env: 'SANDBOXD_DOCKER_MEMORY_MB',
    description:
      'Memory of every VM of the `docker` template, MiB (containerd and dockerd take ~100 MiB of it; the rest is for containers and builds); its snapshot is booted with exactly this',
    parse: integer(512, 8192),
    fallback: () => 1024,
  },
} satisfies Record<string, Setting<unknown>>;

/** The docker block of the configuration. */
export type DockerConfig = SettingValues<typeof dockerSettings>;
