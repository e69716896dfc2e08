/**
 * Template builds on the engine's side: the OCI image becomes a guest image, a build VM boots it (the configured
 * network, the requested shape; not pooled, not a user's), the core's steps run in it through its agent, and the
 * VM is captured with `then: 'stop'`. Of the capture only the disk layer is kept: the template is that qcow2 over
 * the OCI image's ext4, booted with the image's kernel arguments, and its snapshot for the build's shape is made at
 * once, so the first VM of the template is a restore.
 *
 * A template keeps everything it needs in its own directory, `<captureRoot>/templates/<template id>/`: `base/` (the
 * OCI image's kernel, initramfs and ext4, hard links into the image cache, so a cache clean-up cannot break it),
 * `build/disk.qcow2` (what the build wrote) and `snapshots/` (its snapshot set). Deleting the template is removing
 * that directory.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { AgentClient } from '../agent/index.ts';
import type { TemplateBuildStep } from '../model.ts';
import { TemplateBuildError, type BuiltTemplate, type TemplateBuildRequest, type TemplateImage } from '../core/vm-engine.ts';
import type { OciBuildProgress, OciGuestImage, RegistryCredentials } from '../image/oci/index.ts';
import { OciImageError } from '../image/oci/index.ts';
import { runCommand } from '../image/run-command.ts';
import { VmBootError } from '../vm/vm-errors.ts';
import { VCPU_COUNTS, type NetworkMode, type StartedVm, type VcpuCount, type VmDriver } from '../vm/vm-driver.ts';
import { ClientGuestAgent } from './guest-agent.ts';

/** Builds the guest image of an OCI reference (`buildOciImage` with the server's cache, agent and registries). */
export type OciImageLoader = (request: {
  reference: string;
  credentials?: RegistryCredentials;
  signal: AbortSignal;
  onProgress: (progress: OciBuildProgress) => void;
}) => Promise<OciGuestImage>;

export interface TemplateBuildContext {
  driver: VmDriver<AgentClient>;
  /** Per-VM run directories (the build VM's too; recovery reaps one a crashed server left). */
  runRoot: string;
  /** `<captureRoot>/templates`. */
  templatesRoot: string;
  network: NetworkMode;
  loadOciImage: OciImageLoader;
  /** Resolves when the build VM may boot (the engine's recovery, which reaps VMs it does not know, is over). */
  beforeBoot(): Promise<void>;
  /** Makes the template's snapshot of this shape (the engine's snapshot set of the template). */
  warm(image: TemplateImage, vcpuCount: VcpuCount, memoryMb: number): Promise<void>;
  /** Hands the built template to the cluster (its object store), when there is one: any node may then start it. */
  publish?(image: TemplateImage, baseRootfsPath: string, owner: { userId: number }): Promise<void>;
}

/** How long the build VM's cold boot may take: a large foreign image under TCG on a busy host is slow. */
const BOOT_TIMEOUT_MS = 300_000;
/** The capture copies the build VM's memory; under TCG on a busy host that takes seconds. */
const CAPTURE_TIMEOUT_MS = 600_000;
/** How long the agent keeps transfers on hold while the capture runs (the VM ends with it anyway). */
const CAPTURE_HOLD_MS = 120_000;
const MIB = 1024 * 1024;

/** The directory of a template's files on this node. */
export function templateDir(templatesRoot: string, templateId: string): string {
  if (!/^tpl_[a-z2-7]{16}$/.test(templateId)) throw new Error(`not a template id: ${templateId}`);
  return path.join(templatesRoot, templateId);
}

/** Runs one build (see the module comment); the build VM is killed whatever fails. */
export async function buildTemplate(ctx: TemplateBuildContext, request: TemplateBuildRequest): Promise<BuiltTemplate> {
  const { signal } = request;
  if (!(VCPU_COUNTS as readonly number[]).includes(request.vcpuCount))
    throw new TemplateBuildError('boot', `vcpu_count must be one of ${VCPU_COUNTS.join(', ')}`);
  const vcpuCount = request.vcpuCount as VcpuCount;
  const stepMs: Partial<Record<TemplateBuildStep, number>> = {};
  const timed = async <T>(step: TemplateBuildStep, run: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    request.onStep(step);
    try {
      return await run();
    } finally {
      stepMs[step] = Math.round(performance.now() - started);
      request.onOutput(`${step}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }
  };

  const oci = await loadImage(ctx, request, stepMs);
  throwIfAborted(signal, 'boot');
  const dir = templateDir(ctx.templatesRoot, request.templateId);
  await fs.promises.rm(dir, { recursive: true, force: true });
  const base = await linkBaseFiles(oci, path.join(dir, 'base'));

  const driverId = `tplbuild-${randomBytes(6).toString('hex')}`;
  const killVm = () => void ctx.driver.kill(driverId).catch(() => undefined);
  signal.addEventListener('abort', killVm, { once: true });
  let client: AgentClient | undefined;
  try {
    const vm = await timed('boot', async () => {
      await ctx.beforeBoot().catch((error: unknown) => {
        throw new TemplateBuildError('boot', `the VM engine could not start: ${describe(error)}`, [], { cause: error });
      });
      return bootBuildVm(ctx, driverId, base, oci.kernelArgs, vcpuCount, request);
    });
    client = vm.agent;
    const connected = client;
    // The core's steps; `ready` is done already (the identity was applied before the VM was handed over).
    await request.inVm(new ClientGuestAgent({ connected: async () => connected }));
    throwIfAborted(signal, 'snapshot');
    return await timed('snapshot', async () => {
      const image = await captureBuildVm(ctx, driverId, connected, dir, base, oci, request);
      client = undefined;
      request.onOutput(
        `making the template's snapshot (${vcpuCount} vCPU${vcpuCount === 1 ? '' : 's'}, ${request.memoryMb} MiB): a cold boot of what the build left`,
      );
      await ctx.warm(image, vcpuCount, request.memoryMb).catch((error: unknown) => {
        throw new TemplateBuildError('snapshot', `the template's snapshot could not be made: ${describe(error)}`, tailOf(error), { cause: error });
      });
      if (ctx.publish) {
        request.onOutput('uploading the template to the object store');
        await ctx.publish(image, base.rootfsPath, { userId: request.userId }).catch((error: unknown) => {
          throw new TemplateBuildError('snapshot', `the template could not be uploaded to the object store: ${describe(error)}`, [], { cause: error });
        });
      }
      return { image, env: oci.config.env, digest: oci.digest, stepMs };
    });
  } finally {
    signal.removeEventListener('abort', killVm);
    await client?.close().catch(() => undefined);
    // A no-op once the capture consumed the VM; otherwise nothing may outlive a failed or cancelled build.
    await ctx.driver.kill(driverId).catch(() => undefined);
  }
}

/** Removes a template's directory (its files, build layer and snapshot set). */
export async function removeTemplateFiles(templatesRoot: string, templateId: string): Promise<void> {
  await fs.promises.rm(templateDir(templatesRoot, templateId), { recursive: true, force: true });
}

/** The OCI steps (`resolve` … `mkfs`), their progress as the build's steps and log lines. */
async function loadImage(ctx: TemplateBuildContext, request: TemplateBuildRequest, stepMs: Partial<Record<TemplateBuildStep, number>>): Promise<OciGuestImage> {
  try {
    return await ctx.loadOciImage({
      reference: request.ociImage,
      ...(request.registryAuth ? { credentials: request.registryAuth } : {}),
      signal: request.signal,
      onProgress: (progress) => {
        switch (progress.type) {
          case 'step-start':
            request.onStep(progress.step);
            break;
          case 'step-done':
            stepMs[progress.step] = progress.stepMs;
            request.onOutput(`${progress.step}: ${(progress.stepMs / 1000).toFixed(1)} s`);
            break;
          case 'output':
            request.onOutput(progress.line);
            break;
          case 'cached':
            request.onOutput(`the guest image of ${progress.digest} is in the cache: pull, unpack, runtime and mkfs are skipped`);
            break;
          case 'layer':
            if (progress.event.type === 'layer-built') request.onOutput(`built the ${progress.event.layer} layer`);
            break;
        }
      },
    });
  } catch (error) {
    if (error instanceof TemplateBuildError) throw error;
    if (error instanceof OciImageError) throw new TemplateBuildError(error.step ?? 'resolve', error.message, error.outputTail, { cause: error });
    throw new TemplateBuildError('resolve', describe(error), [], { cause: error });
  }
}

interface BaseFiles {
  kernelPath: string;
  initrdPath: string;
  rootfsPath: string;
}

/**
 * The OCI image's files in the template's own directory: hard links (nothing copied) where the cache is on the
 * same filesystem, else sparse copies. QEMU, running as the VM user, must traverse every directory on the way.
 */
async function linkBaseFiles(oci: OciGuestImage, dir: string): Promise<BaseFiles> {
  await fs.promises.mkdir(dir, { recursive: true, mode: 0o711 });
  // base/, the template's directory and the templates root (which may predate this build).
  for (const at of [dir, path.dirname(dir), path.dirname(path.dirname(dir))]) await fs.promises.chmod(at, 0o711);
  const files = {
    kernelPath: path.join(dir, path.basename(oci.kernelPath)),
    initrdPath: path.join(dir, path.basename(oci.initrdPath)),
    rootfsPath: path.join(dir, path.basename(oci.rootfsPath)),
  };
  await Promise.all([linkOrCopy(oci.kernelPath, files.kernelPath), linkOrCopy(oci.initrdPath, files.initrdPath), linkOrCopy(oci.rootfsPath, files.rootfsPath)]);
  return files;
}

async function linkOrCopy(from: string, to: string): Promise<void> {
  try {
    await fs.promises.link(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    // A 1 GiB ext4 that holds a few hundred MiB: keep its holes.
    await runCommand('cp', ['--sparse=always', '--reflink=auto', '--', from, to]);
  }
}

/** Cold-boots the build VM and gives it an identity (hostname, machine id, clock, entropy). */
async function bootBuildVm(
  ctx: TemplateBuildContext,
  driverId: string,
  base: BaseFiles,
  kernelArgs: string[],
  vcpuCount: VcpuCount,
  request: TemplateBuildRequest,
): Promise<StartedVm<AgentClient>> {
  let vm: StartedVm<AgentClient>;
  try {
    vm = await ctx.driver.boot({
      vmId: driverId,
      runDir: path.join(ctx.runRoot, driverId),
      image: { ...base, rootfsFormat: 'raw', kernelArgs },
      vcpuCount,
      memoryMb: request.memoryMb,
      network: ctx.network,
      timeoutMs: BOOT_TIMEOUT_MS,
      signal: request.signal,
    });
  } catch (error) {
    throwIfAborted(request.signal, 'boot');
    if (error instanceof VmBootError) {
      throw new TemplateBuildError(
        'boot',
        `the build VM did not come up (stage ${error.stage}): ${error.reason}`,
        error.consoleTail
          .split('\n')
          .filter((line) => line.trim() !== '')
          .slice(-30),
        { cause: error },
      );
    }
    throw new TemplateBuildError('boot', `the build VM did not come up: ${describe(error)}`, [], { cause: error });
  }
  try {
    const name = `build-${request.templateId.slice(4)}`;
    await vm.agent.restore({ hostname: name, vmId: name, timeoutMs: 60_000 });
  } catch (error) {
    throwIfAborted(request.signal, 'boot');
    throw new TemplateBuildError('boot', `the build VM's agent did not take its identity: ${describe(error)}`, [], { cause: error });
  }
  request.onOutput(`the build VM is up (${vcpuCount} vCPU${vcpuCount === 1 ? '' : 's'}, ${request.memoryMb} MiB, network ${ctx.network})`);
  return vm;
}

/**
 * Captures the build VM (it ends), keeps only its disk layer and answers the template's image: that layer over the
 * OCI root filesystem, with the image's kernel and arguments and its snapshot set beside it.
 */
async function captureBuildVm(
  ctx: TemplateBuildContext,
  driverId: string,
  client: AgentClient,
  dir: string,
  base: BaseFiles,
  oci: OciGuestImage,
  request: TemplateBuildRequest,
): Promise<TemplateImage> {
  const buildDir = path.join(dir, 'build');
  let diskPath: string;
  let diskSizeBytes: number;
  try {
    // What the build wrote reaches the disk, and the transfer share is unmounted (it blocks the migration).
    await client
      .exec({ argv: ['sync'], timeoutMs: 120_000 })
      .collect()
      .catch(() => undefined);
    await client.quiesce({ holdMs: CAPTURE_HOLD_MS });
    await client.close();
    const result = await ctx.driver.captureSnapshot({
      vmId: driverId,
      snapshotDir: buildDir,
      then: 'stop',
      timeoutMs: CAPTURE_TIMEOUT_MS,
      signal: request.signal,
    });
    diskPath = result.diskPath;
    diskSizeBytes = result.diskSizeBytes;
    request.onOutput(`captured the build VM in ${(result.durationMs / 1000).toFixed(1)} s: its disk layer holds ${(result.diskBytes / MIB).toFixed(1)} MiB`);
  } catch (error) {
    throwIfAborted(request.signal, 'snapshot');
    throw new TemplateBuildError('snapshot', `the build VM could not be captured: ${describe(error)}`, [], { cause: error });
  }
  // Memory and device state are of no use: the template's VMs boot from the disk (a snapshot is made of that).
  for (const name of await fs.promises.readdir(buildDir)) {
    if (path.join(buildDir, name) !== diskPath) await fs.promises.rm(path.join(buildDir, name), { recursive: true, force: true });
  }
  return {
    hash: createHash('sha256').update(`sandboxd-template\0${request.templateId}\0${oci.hash}`).digest('hex'),
    templateId: request.templateId,
    kernelPath: base.kernelPath,
    initrdPath: base.initrdPath,
    rootfsPath: diskPath,
    rootfsFormat: 'qcow2',
    kernelArgs: oci.kernelArgs,
    diskSizeMb: Math.round(diskSizeBytes / MIB),
    snapshotRoot: path.join(dir, 'snapshots'),
  };
}

function throwIfAborted(signal: AbortSignal, step: TemplateBuildStep): void {
  if (signal.aborted) throw new TemplateBuildError(step, `the build was cancelled during ${step}`, [], { cause: signal.reason });
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function tailOf(error: unknown): string[] {
  return error instanceof VmBootError
    ? error.consoleTail
        .split('\n')
        .filter((line) => line.trim() !== '')
        .slice(-30)
    : [];
}
