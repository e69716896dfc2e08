/**
 * Public types of the OCI image build (`buildOciImage`): an OCI image reference in, a bootable guest image out.
 */
import type { EnsureGuestImageOptions, GuestImage, ImageBuildProgress } from '../types.ts';

/** The named steps of a build, in order; progress and errors name them. */
export const OCI_BUILD_STEPS = ['resolve', 'pull', 'unpack', 'runtime', 'mkfs'] as const;
/**
 * - `resolve`: the reference is checked and resolved to the digest of one linux/amd64 image manifest.
 * - `pull`: `skopeo copy` of that digest into an OCI layout in the cache (skopeo verifies every digest).
 * - `unpack`: `umoci unpack` of the layout into a root filesystem (layers applied in order, whiteouts too).
 * - `runtime`: the agent, its runtime (`/opt/sandboxd/runtime`) and the foreign-root guest-init are added.
 * - `mkfs`: the tree becomes a sparse ext4 image next to the kernel files and `manifest.json`.
 */
export type OciBuildStep = (typeof OCI_BUILD_STEPS)[number];

/** Registry credentials; they reach skopeo through a 0600 auth file, never a command line. */
export interface RegistryCredentials {
  username: string;
  password: string;
}

/** The parts of an image's config that say how it wants to run, normalised. */
export interface OciImageConfig {
  /** `Env`, as a map (a later duplicate wins, as in a container runtime). */
  env: Record<string, string>;
  /** `WorkingDir`, or null when the image sets none. */
  workingDir: string | null;
  /** `User` (`name`, `uid`, `uid:gid`…), or null when the image sets none. */
  user: string | null;
  entrypoint: string[];
  cmd: string[];
}

/** A guest image built from an OCI image: the same files as the default image, booted by the same driver. */
export interface OciGuestImage extends GuestImage {
  /** Kernel parameters the image needs (`sandboxd.init=/opt/sandboxd/guest-init`); pass them to the driver. */
  kernelArgs: string[];
  /** The reference as given, normalised (`registry/repository[:tag][@digest]`). */
  reference: string;
  /** Digest of the linux/amd64 image manifest that was pulled (of the platform's manifest, not of an index). */
  digest: string;
  config: OciImageConfig;
  /** The cached OCI layout it was unpacked from (reused by builds of the same digest with another agent). */
  layoutDir: string;
}

/** Progress of `buildOciImage`; `elapsedMs` counts from the start of the call. */
export type OciBuildProgress =
  | { type: 'step-start'; step: OciBuildStep; elapsedMs: number }
  | { type: 'step-done'; step: OciBuildStep; elapsedMs: number; stepMs: number }
  /** One line of a tool's output (skopeo, umoci, mkfs) during a step. */
  | { type: 'output'; step: OciBuildStep; line: string; elapsedMs: number }
  /** The finished image was in the cache: nothing after `resolve` ran. */
  | { type: 'cached'; digest: string; hash: string; elapsedMs: number }
  /** A cached layer's event (the pulled layout, the runtime, the kernel and base layers). */
  | { type: 'layer'; step: OciBuildStep; event: ImageBuildProgress; elapsedMs: number };

/** Options of `buildOciImage`. */
export interface BuildOciImageOptions extends Pick<
  EnsureGuestImageOptions,
  'cacheDir' | 'agentBundlePath' | 'kernelVersion' | 'mirrors' | 'recipesDir' | 'lockTimeoutMs'
> {
  /** `[registry/]repository[:tag][@digest]`, Docker's short forms included (`alpine` = `docker.io/library/alpine:latest`). */
  reference: string;
  /** Basic credentials for the registry (bearer-token registries take them too); none: anonymous. */
  credentials?: RegistryCredentials;
  /**
   * Registries (`host[:port]`, as in the reference) spoken to over plain HTTP or unverified TLS. Being the
   * operator's choice, they may be on loopback or private addresses.
   */
  insecureRegistries?: readonly string[];
  /**
   * Let the registry's name be or resolve to a loopback, private, link-local or metadata address (default false:
   * such a registry is refused before any tool runs). Redirects to such addresses are refused either way.
   */
  allowPrivateRegistries?: boolean;
  /** How the registry's name is resolved (default the system's resolver); tests stand in for DNS with it. */
  resolveHost?: (host: string) => Promise<string[]>;
  /**
   * Size of the root filesystem (default: the smallest whole GiB, at least 1, that holds the tree with 512 MiB
   * to spare); the engine grows a VM's disk to its quota as for the default image.
   */
  diskSizeGiB?: number;
  onProgress?: (progress: OciBuildProgress) => void;
  /** Aborting kills the running tool and rejects with `OCI_ABORTED`. */
  signal?: AbortSignal;
}
