/**
 * What VMs start from, found by name or reference: the built-in template (`default`), the templates a user built
 * from OCI images, and the snapshots a user took. Names are one namespace per user, snapshots and templates
 * alike, so a request's `snapshot: "x"` and `template: "x"` find the same thing (clients of the original service
 * call an OCI build a snapshot too).
 */
import type { Ownership, Placed } from './cluster/ownership.ts';
import { AppError, notFound } from './errors.ts';
import { DEFAULT_TEMPLATE_ID, DESKTOP_TEMPLATE_ID, DOCKER_TEMPLATE_ID, type Snapshot, type Template, type VmSourceRef } from '../model.ts';
import type { TemplateImage, VmSource } from './vm-engine.ts';
import type { Database, Executor } from '../store/database.ts';
import { findSnapshot, findSnapshotByName } from '../store/snapshots-store.ts';
import { findTemplate, findTemplateByName } from '../store/templates-store.ts';

/** A source ready for the engine. */
export interface ResolvedSource {
  ref: VmSourceRef;
  source: VmSource;
  /** A snapshot fixes the VM's vCPU count and memory; a template serves any (null). */
  shape: { vcpuCount: number; memoryMb: number } | null;
  /** A VM started from a snapshot builds its disk on it, so the snapshot must be kept while the VM lives. */
  baseSnapshotId: string | null;
  /** The Python context a VM started from it goes on in (a snapshot's); null: the session's own. */
  pythonContext: string | null;
}

/** A source as the API shows it: what it is, its id and its name. */
export interface SourceSummary {
  kind: VmSourceRef['kind'];
  id: string;
  name: string;
}

/**
 * A built-in template besides `default` (the desktop, docker): its image, built or found on first use, and the one shape
 * its VMs have (what its `prepare` started is in its snapshot, made for exactly that memory).
 */
export interface BuiltinSource {
  load(): Promise<TemplateImage>;
  shape: { vcpuCount: number; memoryMb: number };
}

/** Names no user's snapshot or template may take. */
export const BUILTIN_SOURCE_NAMES: readonly string[] = [DEFAULT_TEMPLATE_ID, DESKTOP_TEMPLATE_ID, DOCKER_TEMPLATE_ID];

export class VmSources {
  private readonly builtins: Map<string, BuiltinSource>;
  private readonly loaded = new Map<string, Promise<TemplateImage>>();

  constructor(
    private readonly database: Database,
    private readonly ownership: Ownership,
    builtins: Record<string, BuiltinSource> = {},
    /** Whether snapshots and templates live in the cluster's object store (any node starts them), not on one node. */
    private readonly portable = false,
  ) {
    this.builtins = new Map(Object.entries(builtins));
  }

  /** Whether `ref` names the built-in template `id` (e.g. the desktop). */
  static isBuiltin(ref: VmSourceRef, id: string): boolean {
    return ref.kind === 'template' && ref.id === id;
  }

  /** A built-in template's image, loaded once (a failed load is tried again next time). */
  builtinImage(id: string): Promise<TemplateImage> {
    const builtin = this.builtins.get(id);
    if (!builtin) throw notFound(`snapshot or template "${id}"`);
    let image = this.loaded.get(id);
    if (!image) {
      image = builtin.load();
      this.loaded.set(id, image);
      image.catch(() => this.loaded.delete(id));
    }
    return image;
  }

  /** The user's snapshot or template named `name` (or the built-in `default`); 404 otherwise. */
  async byName(userId: number, name: string): Promise<VmSourceRef> {
    if (name === DEFAULT_TEMPLATE_ID) return { kind: 'template', id: DEFAULT_TEMPLATE_ID };
    if (this.builtins.has(name)) return { kind: 'template', id: name };
    const snapshot = await findSnapshotByName(this.database.db, userId, name);
    if (snapshot) return { kind: 'snapshot', id: snapshot.id };
    const template = await findTemplateByName(this.database.db, userId, name);
    if (template) return { kind: 'template', id: template.id };
    throw notFound(`snapshot or template "${name}"`);
  }

  /** What the engine needs to start a VM from `ref` for `userId`; a source of another user is not found. */
  async resolve(userId: number, ref: VmSourceRef): Promise<ResolvedSource> {
    if (ref.kind === 'template' && ref.id === DEFAULT_TEMPLATE_ID)
      return { ref, source: { kind: 'template' }, shape: null, baseSnapshotId: null, pythonContext: null };
    const builtin = ref.kind === 'template' ? this.builtins.get(ref.id) : undefined;
    if (builtin) {
      let image: TemplateImage;
      try {
        image = await this.builtinImage(ref.id);
      } catch (error) {
        throw new AppError('VM_UNAVAILABLE', `the built-in ${ref.id} template's image is not available on this node: ${(error as Error).message}`);
      }
      return { ref, source: { kind: 'template', image }, shape: { ...builtin.shape }, baseSnapshotId: null, pythonContext: null };
    }
    if (ref.kind === 'template') {
      const template = await this.ownedTemplate(userId, ref.id);
      if (template.status !== 'ready' || !template.image) {
        throw new AppError(
          'CONFLICT',
          `template ${template.name} is ${template.status}${template.error ? `: ${template.error}` : ''}; VMs start from ready templates only`,
        );
      }
      this.assertLocal(template, `template ${template.name}`);
      // The image's own environment is applied in the guest (the agent's --env-file), not here.
      const { env: _env, ...image } = template.image;
      return { ref, source: { kind: 'template', image }, shape: null, baseSnapshotId: null, pythonContext: null };
    }
    const snapshot = await this.ownedSnapshot(userId, ref.id);
    if (snapshot.status !== 'ready') throw new AppError('CONFLICT', `snapshot ${snapshot.name} is still being taken; retry in a moment`);
    this.assertLocal(snapshot, `snapshot ${snapshot.name}`);
    return {
      ref,
      source: { kind: 'snapshot', snapshotId: snapshot.id, diskSizeMb: snapshot.diskSizeMb },
      shape: { vcpuCount: snapshot.vcpuCount, memoryMb: snapshot.memoryMb },
      baseSnapshotId: snapshot.id,
      pythonContext: snapshot.pythonContext,
    };
  }

  /** The id, kind and name of a source, for answers; an unknown one (deleted since) keeps its id as name. */
  async summary(ref: VmSourceRef): Promise<SourceSummary> {
    if (ref.kind === 'template' && (ref.id === DEFAULT_TEMPLATE_ID || this.builtins.has(ref.id))) return { ...ref, name: ref.id };
    const found = ref.kind === 'snapshot' ? await findSnapshot(this.database.db, ref.id) : await findTemplate(this.database.db, ref.id);
    return { ...ref, name: found?.name ?? ref.id };
  }

  /** Throws CONFLICT when the user already has a snapshot or template of this name (or it is the built-in one's). */
  async assertNameFree(db: Executor, userId: number, name: string): Promise<void> {
    if (BUILTIN_SOURCE_NAMES.includes(name)) throw new AppError('CONFLICT', `"${name}" is a built-in template's name`);
    if ((await findSnapshotByName(db, userId, name)) || (await findTemplateByName(db, userId, name))) {
      throw new AppError('CONFLICT', `you already have a snapshot or template named "${name}"`);
    }
  }

  async ownedSnapshot(userId: number, id: string): Promise<Snapshot> {
    const snapshot = await findSnapshot(this.database.db, id);
    if (!snapshot || snapshot.userId !== userId) throw notFound(`snapshot ${id}`);
    return snapshot;
  }

  async ownedTemplate(userId: number, id: string): Promise<Template> {
    const template = await findTemplate(this.database.db, id);
    if (!template || template.userId !== userId) throw notFound(`template ${id}`);
    return template;
  }

  /** Snapshot and template files live on the node that made them (unless in the object store): work on them runs there. */
  assertLocal(source: Placed, what: string): void {
    if (this.portable) return;
    this.ownership.assertLocal(source, `${what} is`);
  }
}
