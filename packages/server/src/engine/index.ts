/**
 * Builds the VM engine from its options (drawn from the configuration's `vm` block, by config/index.ts's
 * `engineOptions`): the QEMU driver, the guest image from the cache, and the engine with its pool and snapshots.
 * Engine and driver events become log lines here (libraries don't log).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyBaseLogger } from 'fastify';
import type { TemplateImage } from '../core/vm-engine.ts';
import { DESKTOP_DEFAULT_SCREEN, DESKTOP_PORTS } from '../core/computer-use/desktop.ts';
import {
  BROWSER_DEVTOOLS_PORT,
  BROWSER_START_PATH,
  browserFlavour,
  DESKTOP_START_PATH,
  desktopFlavour,
  DOCKER_START_PATH,
  dockerFlavour,
  ensureGuestImage,
  type ImageFlavour,
} from '../image/index.ts';
import { buildOciImage } from '../image/oci/index.ts';
import { ArtifactCache, ArtifactStore } from '../storage/artifacts/index.ts';
import { createObjectStore, type ObjectStoreOptions } from '../storage/index.ts';
import { QemuDriver } from '../vm/qemu/qemu-driver.ts';
import { agentClientHandoff } from '../vm/agent-client-probe.ts';
import type { AcceleratorRequest, NetworkMode, VcpuCount } from '../vm/vm-driver.ts';
import { SandboxEngine } from './sandbox-engine.ts';

/** Where the set-up script puts the agent bundle (`npm run bundle -w @sandboxd/agent`). */
export const AGENT_BUNDLE_PATH = fileURLToPath(new URL('../../../agent/dist/agent.mjs', import.meta.url));

/**
 * Snapshot memory tiers, for sizes other than the default (`SANDBOXD_DEFAULT_MEMORY_MB`, which has snapshots of
 * exactly its size, restored without touching the balloon). Other requests up to 1 GiB restore from a 1 GiB
 * snapshot shrunk to 256 MiB, larger ones from an 8 GiB snapshot shrunk to 1 GiB; both are built on first use
 * (shrinking 7 GiB with the balloon takes minutes under TCG, seconds under KVM). 256 MiB is the floor: the
 * agent, its helper and a spare Python interpreter need about 100 MiB beside the kernel's own ~55 MiB.
 */
export const MEMORY_TIERS = [
  { bootMemoryMb: 1024, minMemoryMb: 256 },
  { bootMemoryMb: 8192, minMemoryMb: 1024 },
];

/** The VM settings the engine is built from: the configuration's `vm` block (config/vm.ts) has them. */
export interface EngineVmSettings {
  accel: AcceleratorRequest;
  hostCpuReserve: number;
  vmCpuWeight: number;
  vmNetworkUnguarded: boolean;
  cacheDir: string;
  snapshotDir: string;
  vmSnapshotDir: string;
  runDir: string;
  vmNetwork: NetworkMode;
  poolSize: number;
  poolMax: number;
  minFreeMemoryMb: number;
  maxConcurrentRestores: number;
  warmVcpus: VcpuCount[];
  defaultMemoryMb: number;
  keepVmsOnShutdown: boolean;
  minFreeDiskMb: number;
  agentReconnectSeconds: number;
  cacheRetentionDays: number;
  tcgCacheMb: number;
}

/** What the engine is built from: the VM settings and the little it needs of other areas. */
export interface EngineOptions {
  vm: EngineVmSettings;
  /** This node's name, recorded with each VM. */
  nodeId: string;
  /** The data directory: the engine keeps its VMs' state under `<dataDir>/vms`. */
  dataDir: string;
  /** Registries templates pull from: the operator's insecure ones, and whether private addresses may serve one. */
  registries: { insecureRegistries: string[]; allowPrivateRegistries: boolean };
  /** The object store paused VMs, snapshots and templates go to, and this node's cache of them; null: they stay here. */
  artifacts: { objects: ObjectStoreOptions; cacheLimitBytes: number; gcGraceMs: number } | null;
}

export function createEngine(options: EngineOptions, log: FastifyBaseLogger): SandboxEngine {
  const { vm, registries } = options;
  const driver = new QemuDriver({
    accelerator: vm.accel,
    agentProbe: agentClientHandoff(),
    resourceLimits: { hostCpuReserve: vm.hostCpuReserve, cpuWeight: vm.vmCpuWeight },
    networkGuard: { required: !vm.vmNetworkUnguarded },
    tcgCacheMb: vm.tcgCacheMb,
  });
  const engine = new SandboxEngine({
    nodeId: options.nodeId,
    driver,
    loadImage: () =>
      ensureGuestImage({
        cacheDir: vm.cacheDir,
        agentBundlePath: AGENT_BUNDLE_PATH,
        onProgress: (event) => {
          if (event.type === 'layer-built' || event.type === 'stage-start') log.info({ image: event }, 'guest image build');
        },
      }),
    snapshotRoot: vm.snapshotDir,
    captureRoot: vm.vmSnapshotDir,
    // The registry is checked and pinned, and skopeo runs behind the pull guard (image/oci/registry-access.ts):
    // the operator's insecure registries are trusted wherever they are; any other must be public (SSRF).
    loadOciImage: ({ reference, credentials, signal, onProgress }) =>
      buildOciImage({
        reference,
        ...(credentials ? { credentials } : {}),
        insecureRegistries: registries.insecureRegistries,
        allowPrivateRegistries: registries.allowPrivateRegistries,
        cacheDir: vm.cacheDir,
        agentBundlePath: AGENT_BUNDLE_PATH,
        signal,
        onProgress,
      }),
    stateDir: path.join(options.dataDir, 'vms'),
    runRoot: vm.runDir,
    network: vm.vmNetwork,
    poolSize: vm.poolSize,
    poolMax: vm.poolMax,
    minFreeMemoryMb: vm.minFreeMemoryMb,
    maxConcurrentRestores: vm.maxConcurrentRestores,
    warmVcpuCounts: vm.warmVcpus,
    poolMemoryMb: vm.defaultMemoryMb,
    memoryTiers: MEMORY_TIERS,
    killOnClose: !vm.keepVmsOnShutdown,
    minFreeDiskMb: vm.minFreeDiskMb,
    agentReconnectTimeoutMs: vm.agentReconnectSeconds * 1000,
    cacheRetentionMs: vm.cacheRetentionDays * 86_400_000,
    artifacts: options.artifacts
      ? {
          store: new ArtifactStore({ objects: createObjectStore(options.artifacts.objects) }),
          cache: new ArtifactCache({ indexPath: path.join(options.dataDir, 'vms', 'artifact-cache.json'), limitBytes: options.artifacts.cacheLimitBytes }),
          gcGraceMs: options.artifacts.gcGraceMs,
        }
      : null,
  });
  engine.events.on('progress', (message) => log.info({ engine: message }, 'engine'));
  engine.events.on('warning', (warning) => log.warn({ warning }, warning.message));
  engine.events.on('ready', ({ host, image, adopted, readyMs }) => {
    if (host.acceleratorFallbackReason)
      log.warn({ accelerator: host.accelerator }, `KVM is not usable here, VMs run on TCG (slower): ${host.acceleratorFallbackReason}`);
    for (const [name, part] of Object.entries({ resourceLimits: host.resourceLimits, networkGuard: host.networkGuard, processSandbox: host.processSandbox })) {
      if (!part.active) log.warn({ [name]: part.detail }, `${name} is not active: ${part.detail}`);
    }
    log.info({ accelerator: host.accelerator, image: image.hash, adopted, readyMs }, 'VM engine ready');
  });
  engine.events.on('acquired', ({ vmId, fromPool, ms }) => log.debug({ 'vm.id': vmId, fromPool, ms }, 'VM acquired'));
  engine.events.on('warmed', (report) => log.debug({ warmUp: report }, 'pooled VM warmed'));
  engine.events.on('identified', ({ vmId, ms }) => log.debug({ 'vm.id': vmId, ms }, 'VM identity applied'));
  engine.events.on('diskGrown', ({ vmId, diskMb, ms }) => log.debug({ 'vm.id': vmId, diskMb, ms }, 'VM disk grown to its quota'));
  engine.events.on('agent-link', ({ vmId, state, message }) =>
    (state === 'restored' ? log.info : log.warn).call(log, { 'vm.id': vmId, agentLink: state }, message),
  );
  return engine;
}

/**
 * A built-in template from an image flavour: the flavour's image (built by the set-up script; built here on
 * first use otherwise), its VMs' memory, and the program that brings a booted VM to its ready state before the
 * template's snapshot is saved.
 */
async function flavourTemplate(cacheDir: string, log: FastifyBaseLogger, flavour: ImageFlavour, memoryMb: number, prepare: string[]): Promise<TemplateImage> {
  const image = await ensureGuestImage({
    cacheDir,
    agentBundlePath: AGENT_BUNDLE_PATH,
    flavour,
    onProgress: (event) => {
      if (event.type === 'layer-built' || event.type === 'stage-start') log.info({ image: event }, `${flavour.name} image build`);
    },
  });
  return {
    hash: image.hash,
    kernelPath: image.kernelPath,
    initrdPath: image.initrdPath,
    rootfsPath: image.rootfsPath,
    rootfsFormat: 'raw',
    kernelArgs: [],
    diskSizeMb: image.diskSizeMb,
    memoryMb,
    prepare: { argv: prepare, timeoutMs: 300_000 },
  };
}

/**
 * The built-in `browser` template (~1.5 min to build its image): Chromium started before its snapshot. Its image is
 * in the guest image cache `cacheDir`; its VMs get `memoryMb`.
 */
export async function loadBrowserTemplate(cacheDir: string, memoryMb: number, log: FastifyBaseLogger): Promise<TemplateImage> {
  return flavourTemplate(cacheDir, log, await browserFlavour(), memoryMb, [BROWSER_START_PATH, String(BROWSER_DEVTOOLS_PORT)]);
}

/** The built-in `desktop` template (~2 min to build its image): the desktop and its service up before its snapshot. */
export async function loadDesktopTemplate(cacheDir: string, memoryMb: number, log: FastifyBaseLogger): Promise<TemplateImage> {
  const { width, height } = DESKTOP_DEFAULT_SCREEN;
  return flavourTemplate(cacheDir, log, await desktopFlavour(), memoryMb, [
    DESKTOP_START_PATH,
    String(width),
    String(height),
    String(DESKTOP_PORTS.api),
    String(DESKTOP_PORTS.viewer),
  ]);
}

/**
 * The built-in `docker` template: containerd and dockerd up (and the kernel modules Docker needs loaded) before its
 * snapshot, so a restored VM runs `docker run` at once. Docker runs inside the guest only; the host runs no image.
 */
export async function loadDockerTemplate(cacheDir: string, memoryMb: number, log: FastifyBaseLogger): Promise<TemplateImage> {
  return flavourTemplate(cacheDir, log, await dockerFlavour(), memoryMb, [DOCKER_START_PATH]);
}
