/**
 * What VMs leave behind, as the cluster's rather than this node's: paused VMs, users' snapshots, templates and the
 * snapshots of each template's shapes go to the object store as artifacts (`storage/artifacts/`: content-addressed
 * chunks), and a node that needs one it does not have fetches it into the same directory it would have made it in.
 *
 * Snapshots depend on files outside their directory by path (a qcow2 layer names its backing file; the manifest
 * names the kernel and initramfs). On the way out each such path is named as the cluster can find it: a file of
 * another artifact (a snapshot's layer built over a template's snapshot) or, for a file no artifact holds (an
 * image's root filesystem or kernel), its content's SHA-256, the file then carried as an `image` artifact of its
 * own. On the way in each is resolved to this node's copy (fetched first when missing) and the snapshot is
 * re-pointed at it (`VmDriver.importSnapshot`). Directories fetched here are recorded in the node's bounded cache
 * (`ArtifactCache`); what nothing running uses may be evicted, since the store keeps it.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AgentClient } from '../agent/index.ts';
import { AppError } from '../core/errors.ts';
import type { ClusterStorage } from '../core/vm-engine.ts';
import { ArtifactError, type ArtifactCache, type ArtifactKind, type ArtifactRef, type ArtifactStore } from '../storage/artifacts/index.ts';
import type { SnapshotDependencies, VmDriver } from '../vm/vm-driver.ts';
import { ContentIndex } from './content-index.ts';
import { volumeImagePath } from './volumes.ts';

/** A file an artifact depends on: one of another artifact's files, or a file known by its content alone. */
type Dependency = { ref: ArtifactRef; file: string } | { content: string };

/** What a snapshot-like artifact (pause, snapshot, variant) keeps beside its files. */
interface CaptureMeta {
  snapshot: unknown;
  disk: (Dependency & { format: 'raw' | 'qcow2' }) | null;
  kernel: Dependency;
  initrd: Dependency;
}

/** What a template artifact keeps beside its files: which file is the build's layer, and what it is written over. */
interface TemplateMeta {
  layer: string;
  rootfs: string;
}

/** The file a template's directory gets once it is complete (made here or fetched). */
const TEMPLATE_MARKER = 'template.json';

const CAPTURE_KINDS = new Set<ArtifactKind>(['pause', 'snapshot', 'variant']);

export interface EngineArtifactsOptions {
  store: ArtifactStore;
  cache: ArtifactCache;
  driver: VmDriver<AgentClient>;
  nodeId: string;
  /** `<captureRoot>/{paused,snapshots,templates,images}`. */
  captureRoot: string;
  /** The built-in templates' snapshot sets. */
  snapshotRoot: string;
  /** Where the content index lives. */
  stateDir: string;
  /** How old an unreferenced chunk must be before garbage collection deletes it. */
  gcGraceMs: number;
  onProgress?: (message: string) => void;
  onWarning?: (message: string) => void;
  /** A local copy is about to be removed (the engine forgets the snapshot sets it holds). */
  onRemoved?: (dir: string) => void;
}

/** Paths of the files an upload moved, for the caller's log and events. */
export interface PublishOutcome {
  uploadedBytes: number;
  reusedBytes: number;
  ms: number;
}

/** How often local copies are checked against the store (`removeOrphans`). */
const ORPHAN_CHECK_MS = 10 * 60_000;

export class EngineArtifacts implements ClusterStorage {
  readonly contents: ContentIndex;
  /** Publications and fetches in progress, by artifact: a second caller waits for the first. */
  private readonly publishing = new Map<string, Promise<void>>();
  private readonly fetching = new Map<string, Promise<string>>();
  private orphansCheckedAt = 0;

  constructor(private readonly options: EngineArtifactsOptions) {
    this.contents = new ContentIndex(path.join(options.stateDir, 'artifact-contents.json'));
  }

  get store(): ArtifactStore {
    return this.options.store;
  }

  get description(): string {
    return this.options.store.description;
  }

  usage(): ReturnType<ClusterStorage['usage']> {
    return this.options.store.usage().catch((error: unknown) => {
      throw asAppError(error);
    });
  }

  cacheStats(): ReturnType<ClusterStorage['cacheStats']> {
    return this.options.cache.stats();
  }

  collectGarbage(options: { dryRun?: boolean } = {}): ReturnType<ClusterStorage['collectGarbage']> {
    return this.options.store.collectGarbage({ graceMs: this.options.gcGraceMs, ...options }).catch((error: unknown) => {
      throw asAppError(error);
    });
  }

  /**
   * Keeps this node's copies within the cache's limit. Only paused VMs and users' snapshots are evicted, and never
   * one whose directory another local copy's disk layer builds on (it names it by path). Template files and the
   * templates' shapes stay: the engine holds their snapshot sets by path for as long as it runs. A running VM does not
   * keep its source from eviction: QEMU holds its files open, and the next VM from it fetches it again.
   */
  async evict(): Promise<{ evicted: number; freedBytes: number }> {
    const orphans = await this.removeOrphans();
    let backings: Set<string> | undefined;
    const result = await this.options.cache.evict({
      inUse: async (ref, dir) => {
        if (ref.kind !== 'pause' && ref.kind !== 'snapshot') return true;
        backings ??= await this.localBackings();
        return [...backings].some((file) => file.startsWith(`${dir}${path.sep}`));
      },
      remove: async (_ref, dir) => {
        await fs.promises.rm(dir, { recursive: true, force: true });
      },
    });
    return { evicted: result.evicted.length + orphans.removed, freedBytes: result.freedBytes + orphans.freedBytes };
  }

  /**
   * Local copies of artifacts the cluster deleted (a snapshot or template deleted through another node, a pause
   * resumed on another node): each was recorded here once it was in the store, so a recorded copy whose manifest is
   * gone is removed. At most every ten minutes (one HEAD request per copy).
   */
  private async removeOrphans(): Promise<{ removed: number; freedBytes: number }> {
    const result = { removed: 0, freedBytes: 0 };
    if (Date.now() - this.orphansCheckedAt < ORPHAN_CHECK_MS) return result;
    this.orphansCheckedAt = Date.now();
    for (const [area, kind] of [
      ['paused', 'pause'],
      ['snapshots', 'snapshot'],
      ['templates', 'template'],
    ] as const) {
      const names = await fs.promises.readdir(path.join(this.options.captureRoot, area)).catch(() => [] as string[]);
      for (const id of names) {
        const ref: ArtifactRef = { kind, id };
        const dir = this.options.cache.has(ref);
        if (!dir || (await this.options.store.exists(ref))) continue;
        const bytes = await directoryBytes(dir);
        this.options.onRemoved?.(dir);
        await fs.promises.rm(dir, { recursive: true, force: true });
        this.options.cache.forget(ref);
        result.removed += 1;
        result.freedBytes += bytes;
      }
    }
    return result;
  }

  /** The backing files of the disk layers of every capture this node has (pauses, snapshots). */
  private async localBackings(): Promise<Set<string>> {
    const files = new Set<string>();
    for (const area of ['paused', 'snapshots']) {
      const root = path.join(this.options.captureRoot, area);
      const names = await fs.promises.readdir(root).catch(() => [] as string[]);
      for (const name of names) {
        const exported = await this.options.driver.exportSnapshot(path.join(root, name)).catch(() => undefined);
        if (exported?.dependencies.diskBacking) files.add(exported.dependencies.diskBacking.path);
      }
    }
    return files;
  }

  get cache(): ArtifactCache {
    return this.options.cache;
  }

  /** The directory an artifact has on this node (whether or not it is there). */
  dirOf(ref: ArtifactRef): string {
    const { captureRoot, snapshotRoot } = this.options;
    switch (ref.kind) {
      case 'pause':
        return path.join(captureRoot, 'paused', ref.id);
      case 'snapshot':
        return path.join(captureRoot, 'snapshots', ref.id);
      case 'template':
        return path.join(captureRoot, 'templates', ref.id);
      case 'image':
        return path.join(captureRoot, 'images', ref.id);
      case 'variant': {
        // `<set>/<variant>` of a built-in template, `<template id>/<set>/<variant>` of a built one.
        const parts = ref.id.split('/');
        return parts.length === 3 ? path.join(captureRoot, 'templates', parts[0]!, 'snapshots', parts[1]!, parts[2]!) : path.join(snapshotRoot, ref.id);
      }
      case 'volume':
        return path.join(captureRoot, 'volumes', ref.id);
    }
  }

  /** The artifact a local path belongs to, with its file's name there; null for a path no artifact holds. */
  locate(file: string): { ref: ArtifactRef; file: string } | null {
    const { captureRoot, snapshotRoot } = this.options;
    const within = (root: string): string[] | null => {
      const relative = path.relative(root, file);
      return relative.startsWith('..') || path.isAbsolute(relative) ? null : relative.split(path.sep);
    };
    const captured = within(captureRoot);
    if (captured && captured.length >= 3) {
      const [area, id, ...rest] = captured as [string, string, ...string[]];
      if (area === 'snapshots' && rest.length === 1) return { ref: { kind: 'snapshot', id }, file: rest[0]! };
      if (area === 'paused' && rest.length === 1) return { ref: { kind: 'pause', id }, file: rest[0]! };
      if (area === 'templates' && rest[0] === 'snapshots' && rest.length === 4)
        return { ref: { kind: 'variant', id: `${id}/${rest[1]}/${rest[2]}` }, file: rest[3]! };
      if (area === 'templates' && (rest[0] === 'base' || rest[0] === 'build') && rest.length === 2)
        return { ref: { kind: 'template', id }, file: rest.join('/') };
      if (area === 'images' && rest.length === 1) return { ref: { kind: 'image', id }, file: rest[0]! };
    }
    const shared = within(snapshotRoot);
    if (shared && shared.length === 3) return { ref: { kind: 'variant', id: `${shared[0]}/${shared[1]}` }, file: shared[2]! };
    return null;
  }

  /**
   * Uploads a complete snapshot directory (a pause, a user's snapshot, a template's shape) with whatever it depends
   * on that the store does not have yet. Waits for the upload: a pause is only done once the store has it.
   */
  async publishCapture(ref: ArtifactRef, owner: { userId: number | null }): Promise<PublishOutcome> {
    if (!CAPTURE_KINDS.has(ref.kind)) throw new Error(`not a capture: ${ref.kind}`);
    const started = Date.now();
    const dir = this.dirOf(ref);
    const exported = await this.options.driver.exportSnapshot(dir);
    if (!exported) throw new AppError('NOT_FOUND', `${ref.kind} ${ref.id} has no complete files on node ${this.options.nodeId}`);
    const { diskBacking, kernel, initrd } = exported.dependencies;
    const meta: CaptureMeta = {
      snapshot: exported.manifest,
      disk: diskBacking ? { ...(await this.dependencyOf(diskBacking.path)), format: diskBacking.format } : null,
      kernel: await this.dependencyOf(kernel),
      initrd: await this.dependencyOf(initrd),
    };
    const uploaded = await this.options.store.upload(
      ref,
      exported.files.map((name) => ({ name, path: path.join(dir, name) })),
      { owner: { ...owner, nodeId: this.options.nodeId }, meta: meta as unknown as Record<string, unknown> },
    );
    this.record(ref, dir, uploaded.logicalBytes);
    return { uploadedBytes: uploaded.uploadedBytes, reusedBytes: uploaded.reusedBytes, ms: Date.now() - started };
  }

  /**
   * Uploads a capture in the background (a user's snapshot, a template's shape) unless the store has it, trying again
   * while the store is away: every 5 s at first, then up to every 5 minutes, until it is uploaded or its directory is
   * gone (deleted).
   */
  publishInBackground(ref: ArtifactRef, owner: { userId: number | null }): void {
    let delayMs = 5000;
    const attempt = async (): Promise<void> => {
      if (!(await this.options.driver.readSnapshot(this.dirOf(ref)))) return;
      try {
        await this.publishOnce(ref, () => this.publishCapture(ref, owner));
        // Deleted while it was uploading: the store must not keep what the node no longer lists.
        if (!(await this.options.driver.readSnapshot(this.dirOf(ref)))) await this.remove(ref);
      } catch (error) {
        this.options.onWarning?.(
          `uploading ${ref.kind} ${ref.id} to the object store failed (trying again in ${delayMs / 1000} s): ${(error as Error).message}`,
        );
        setTimeout(() => void attempt(), delayMs).unref();
        delayMs = Math.min(delayMs * 2, 300_000);
      }
    };
    void attempt();
  }

  /** Uploads a template's files (its image's kernel, initramfs and root filesystem, and the build's layer). */
  async publishTemplate(templateId: string, owner: { userId: number | null }): Promise<PublishOutcome> {
    const started = Date.now();
    const ref: ArtifactRef = { kind: 'template', id: templateId };
    const dir = this.dirOf(ref);
    const marker = (await readTemplateMarker(dir)) ?? (await this.markBuiltBefore(templateId));
    if (!marker) throw new AppError('NOT_FOUND', `template ${templateId} has no complete files on node ${this.options.nodeId}`);
    const files = [...(await fs.promises.readdir(path.join(dir, 'base'))).map((name) => `base/${name}`), marker.layer];
    const uploaded = await this.options.store.upload(
      ref,
      files.map((name) => ({ name, path: path.join(dir, name) })),
      { owner: { ...owner, nodeId: this.options.nodeId }, meta: marker as unknown as Record<string, unknown> },
    );
    this.record(ref, dir, uploaded.logicalBytes);
    return { uploadedBytes: uploaded.uploadedBytes, reusedBytes: uploaded.reusedBytes, ms: Date.now() - started };
  }

  /**
   * A template built here before its builds marked their directory (an older release): its build's layer is the one
   * qcow2 file in `build/`, written over the root filesystem in `base/` (the largest file there, beside the kernel
   * and initramfs). Marked now, so that it is uploaded like any other; null when the directory is not a whole build.
   */
  private async markBuiltBefore(templateId: string): Promise<TemplateMeta | null> {
    const dir = this.dirOf({ kind: 'template', id: templateId });
    const layers = (await fs.promises.readdir(path.join(dir, 'build')).catch(() => [] as string[])).filter((name) => name.endsWith('.qcow2'));
    const base = await fs.promises.readdir(path.join(dir, 'base')).catch(() => [] as string[]);
    if (layers.length !== 1 || base.length === 0) return null;
    const sizes = await Promise.all(base.map(async (name) => ({ name, size: (await fs.promises.stat(path.join(dir, 'base', name))).size })));
    const rootfs = sizes.sort((a, b) => b.size - a.size)[0]!.name;
    await this.markTemplate(templateId, path.join(dir, 'build', layers[0]!), path.join(dir, 'base', rootfs));
    return readTemplateMarker(dir);
  }

  /** Marks a template directory built here complete (what `ensureTemplate` looks for). */
  async markTemplate(templateId: string, layerPath: string, rootfsPath: string): Promise<void> {
    const dir = this.dirOf({ kind: 'template', id: templateId });
    const marker: TemplateMeta = { layer: path.relative(dir, layerPath), rootfs: path.relative(dir, rootfsPath) };
    await fs.promises.writeFile(path.join(dir, TEMPLATE_MARKER), `${JSON.stringify(marker)}\n`);
  }

  /**
   * The local directory of a snapshot-like artifact, fetched from the store (with what it depends on) when this
   * node does not have it. NOT_FOUND when neither has it.
   */
  ensureCapture(ref: ArtifactRef): Promise<string> {
    return this.once(ref, async () => {
      const dir = this.dirOf(ref);
      if (await this.options.driver.readSnapshot(dir)) {
        this.options.cache.hit(ref);
        this.options.cache.touch(ref);
        return dir;
      }
      this.options.cache.miss(ref);
      const started = Date.now();
      const manifest = await this.options.store.manifest(ref);
      if (!manifest) throw new AppError('NOT_FOUND', `${ref.kind} ${ref.id} is neither on node ${this.options.nodeId} nor in the object store`);
      const meta = manifest.meta as unknown as CaptureMeta;
      // Its dependencies first: a layer is only re-pointed at a file that is there.
      const dependencies: SnapshotDependencies = {
        diskBacking: meta.disk ? { path: await this.localFile(meta.disk), format: meta.disk.format } : null,
        kernel: await this.localFile(meta.kernel),
        initrd: await this.localFile(meta.initrd),
      };
      // A template's shape lives in a directory every server on the host shares, where an incomplete one may be a
      // build under way in another process (snapshot-variants.ts holds its lock and clears it before asking here).
      if (ref.kind === 'variant' && fs.existsSync(dir))
        throw new AppError('VM_UNAVAILABLE', `snapshot ${ref.id} is being made on this host: retry in a moment`);
      // Whatever an earlier, interrupted fetch or capture left there is not a snapshot (it has no manifest).
      await fs.promises.rm(dir, { recursive: true, force: true });
      await fs.promises.mkdir(path.dirname(dir), { recursive: true, mode: 0o711 });
      const fetched = await this.options.store.download(ref, dir);
      await this.options.driver.importSnapshot(dir, meta.snapshot, dependencies);
      await fs.promises.chmod(dir, 0o755);
      this.record(ref, dir, fetched.logicalBytes);
      this.options.onProgress?.(
        `fetched ${ref.kind} ${ref.id} from the object store: ${mib(fetched.downloadedBytes)} MiB in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
      return dir;
    });
  }

  /** A template's local directory, fetched when this node does not have it (its layer re-pointed at its base). */
  ensureTemplate(templateId: string): Promise<string> {
    const ref: ArtifactRef = { kind: 'template', id: templateId };
    return this.once(ref, async () => {
      const dir = this.dirOf(ref);
      if (await readTemplateMarker(dir)) {
        this.options.cache.hit(ref);
        this.options.cache.touch(ref);
        return dir;
      }
      this.options.cache.miss(ref);
      const manifest = await this.options.store.manifest(ref);
      if (!manifest) throw new AppError('NOT_FOUND', `template ${templateId} is neither on node ${this.options.nodeId} nor in the object store`);
      const meta = manifest.meta as unknown as TemplateMeta;
      const staging = `${dir}.fetch`;
      await fs.promises.rm(staging, { recursive: true, force: true });
      await fs.promises.mkdir(path.dirname(dir), { recursive: true, mode: 0o711 });
      const fetched = await this.options.store.download(ref, staging);
      await this.options.driver.rebaseDiskLayer(path.join(staging, meta.layer), { path: path.join(dir, meta.rootfs), format: 'raw' });
      await fs.promises.writeFile(path.join(staging, TEMPLATE_MARKER), `${JSON.stringify(meta)}\n`);
      // QEMU, as the VM user, must traverse every directory on the way.
      for (const sub of ['', 'base', 'build']) await fs.promises.chmod(path.join(staging, sub), 0o711).catch(() => undefined);
      await fs.promises.rm(dir, { recursive: true, force: true });
      await fs.promises.rename(staging, dir);
      this.record(ref, dir, fetched.logicalBytes);
      return dir;
    });
  }

  /**
   * Uploads a volume's image as it is now (its VM ended or paused, its filesystem flushed): the cluster's copy of
   * its latest data, which the next node to mount it fetches.
   */
  async publishVolume(volumeId: string, owner: { userId: number | null }): Promise<PublishOutcome> {
    const started = Date.now();
    const ref: ArtifactRef = { kind: 'volume', id: volumeId };
    const uploaded = await this.options.store
      .upload(ref, [{ name: 'image', path: volumeImagePath(path.join(this.options.captureRoot, 'volumes'), volumeId) }], {
        owner: { ...owner, nodeId: this.options.nodeId },
        meta: {},
      })
      .catch((error: unknown) => {
        throw asAppError(error);
      });
    return { uploadedBytes: uploaded.uploadedBytes, reusedBytes: uploaded.reusedBytes, ms: Date.now() - started };
  }

  /** Replaces this node's image of a volume with the cluster's copy (another node wrote it last). */
  async fetchVolume(volumeId: string): Promise<void> {
    const ref: ArtifactRef = { kind: 'volume', id: volumeId };
    const root = path.join(this.options.captureRoot, 'volumes');
    const staging = path.join(root, `${volumeId}.fetch`);
    await fs.promises.mkdir(root, { recursive: true, mode: 0o711 });
    await fs.promises.rm(staging, { recursive: true, force: true });
    this.options.cache.miss(ref);
    try {
      const started = Date.now();
      const fetched = await this.options.store.download(ref, staging);
      // One rename: a VM never sees half of the old image and half of the new one.
      await fs.promises.rename(path.join(staging, 'image'), volumeImagePath(root, volumeId));
      this.options.onProgress?.(
        `fetched volume ${volumeId} from the object store: ${mib(fetched.downloadedBytes)} MiB in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
    } catch (error) {
      throw asAppError(error);
    } finally {
      await fs.promises.rm(staging, { recursive: true, force: true });
    }
  }

  /** Whether the store has the artifact (a paused VM whose node is gone can be resumed only then). */
  has(ref: ArtifactRef): Promise<boolean> {
    return this.options.store.exists(ref);
  }

  /** Removes an artifact from the store and forgets its local copy (the caller removes the directory). */
  async remove(ref: ArtifactRef): Promise<void> {
    this.options.cache.forget(ref);
    await this.options.store.delete(ref);
  }

  /** Removes a template and its shapes' snapshots from the store. */
  async removeTemplate(templateId: string): Promise<void> {
    for await (const manifest of this.options.store.list('variant')) {
      if (manifest.id.startsWith(`${templateId}/`)) await this.remove({ kind: 'variant', id: manifest.id });
    }
    await this.remove({ kind: 'template', id: templateId });
  }

  /** Forgets a local copy without touching the store (the directory was removed, the artifact lives on). */
  forgetLocal(ref: ArtifactRef): void {
    this.options.cache.forget(ref);
  }

  /** Names a dependency as the cluster finds it, uploading what the store lacks (an image's file, a template's shape). */
  private async dependencyOf(file: string): Promise<Dependency> {
    const located = this.locate(file);
    if (located && located.ref.kind !== 'image') {
      if (CAPTURE_KINDS.has(located.ref.kind)) await this.publishOnce(located.ref, () => this.publishCapture(located.ref, { userId: null }));
      else if (located.ref.kind === 'template') await this.publishOnce(located.ref, () => this.publishTemplate(located.ref.id, { userId: null }));
      return located;
    }
    const content = located?.ref.id ?? (await this.contents.hashOf(file));
    const ref: ArtifactRef = { kind: 'image', id: content };
    await this.publishOnce(ref, async () => {
      await this.options.store.upload(ref, [{ name: 'data', path: file }], { owner: { userId: null, nodeId: this.options.nodeId }, meta: {} });
    });
    return { content };
  }

  /** Uploads `ref` unless the store has it already (one upload per artifact at a time in this process). */
  private publishOnce(ref: ArtifactRef, publish: () => Promise<unknown>): Promise<void> {
    const key = keyOf(ref);
    let pending = this.publishing.get(key);
    if (!pending) {
      pending = (async () => {
        if (!(await this.options.store.exists(ref))) await publish();
      })().finally(() => this.publishing.delete(key));
      this.publishing.set(key, pending);
    }
    return pending;
  }

  /** This node's path of a dependency, fetched (with its own dependencies) when missing. */
  private async localFile(dependency: Dependency): Promise<string> {
    if ('content' in dependency) {
      const known = await this.contents.find(dependency.content);
      if (known) return known;
      const ref: ArtifactRef = { kind: 'image', id: dependency.content };
      const dir = await this.once(ref, async () => {
        const target = this.dirOf(ref);
        if (fs.existsSync(path.join(target, 'data'))) return target;
        this.options.cache.miss(ref);
        await fs.promises.mkdir(path.dirname(target), { recursive: true, mode: 0o711 });
        const fetched = await this.options.store.download(ref, target);
        await fs.promises.chmod(target, 0o755);
        this.record(ref, target, fetched.logicalBytes);
        return target;
      });
      const file = path.join(dir, 'data');
      this.contents.remember(file, dependency.content);
      return file;
    }
    const dir = dependency.ref.kind === 'template' ? await this.ensureTemplate(dependency.ref.id) : await this.ensureCapture(dependency.ref);
    return path.join(dir, dependency.file);
  }

  private once(ref: ArtifactRef, fetch: () => Promise<string>): Promise<string> {
    const key = keyOf(ref);
    let pending = this.fetching.get(key);
    if (!pending) {
      pending = fetch()
        .catch((error: unknown) => {
          throw asAppError(error);
        })
        .finally(() => this.fetching.delete(key));
      this.fetching.set(key, pending);
    }
    return pending;
  }

  private record(ref: ArtifactRef, dir: string, bytes: number): void {
    this.options.cache.record(ref, dir, bytes);
    this.options.cache.touch(ref);
  }
}

/** The object store's failures in the API's terms: it did not answer (503), or what it holds is damaged (500). */
export function asAppError(error: unknown): unknown {
  if (!(error instanceof ArtifactError)) return error;
  if (error.code === 'OBJECT_STORE_UNAVAILABLE') return new AppError('OBJECT_STORE_UNAVAILABLE', error.message);
  if (error.code === 'ARTIFACT_NOT_FOUND') return new AppError('NOT_FOUND', error.message);
  return new AppError('VM_UNAVAILABLE', error.message);
}

async function readTemplateMarker(dir: string): Promise<TemplateMeta | null> {
  try {
    return JSON.parse(await fs.promises.readFile(path.join(dir, TEMPLATE_MARKER), 'utf8')) as TemplateMeta;
  } catch {
    return null;
  }
}

/** What a directory's files take on disk (allocated blocks: holes do not count). */
async function directoryBytes(dir: string): Promise<number> {
  let bytes = 0;
  for (const entry of await fs.promises.readdir(dir, { withFileTypes: true, recursive: true }).catch(() => [])) {
    if (entry.isFile()) bytes += ((await fs.promises.stat(path.join(entry.parentPath ?? entry.path, entry.name)).catch(() => null))?.blocks ?? 0) * 512;
  }
  return bytes;
}

function keyOf(ref: ArtifactRef): string {
  return `${ref.kind}/${ref.id}`;
}

function mib(bytes: number): string {
  return (bytes / 2 ** 20).toFixed(1);
}
