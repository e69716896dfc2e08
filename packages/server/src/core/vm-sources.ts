/**
 * What VMs start from, found by name or reference: the built-in template (`default`), the templates a user built
 * from OCI images, and the snapshots a user took. Names are one namespace per user, snapshots and templates
 * alike, so a request's `snapshot: "x"` and `template: "x"` find the same thing (clients of the original service
 * call an OCI build a snapshot too).
 */
import { AppError, notFound } from './errors.ts';
import { DEFAULT_TEMPLATE_ID, type Snapshot, type Template, type VmSourceRef } from './model.ts';
import type { VmSource } from './vm-engine.ts';
import type { Database } from '../store/database.ts';
import { findSnapshot, findSnapshotByName } from '../store/snapshots-store.ts';
import { findTemplate, findTemplateByName } from '../store/templates-store.ts';
import type { Executor } from '../store/users-store.ts';

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

export class VmSources {
  constructor(
    private readonly database: Database,
    private readonly nodeId: () => string,
  ) {}

  /** The user's snapshot or template named `name` (or the built-in `default`); 404 otherwise. */
  async byName(userId: number, name: string): Promise<VmSourceRef> {
    if (name === DEFAULT_TEMPLATE_ID) return { kind: 'template', id: DEFAULT_TEMPLATE_ID };
    const snapshot = await findSnapshotByName(this.database.db, userId, name);
    if (snapshot) return { kind: 'snapshot', id: snapshot.id };
    const template = await findTemplateByName(this.database.db, userId, name);
    if (template) return { kind: 'template', id: template.id };
    throw notFound(`snapshot or template "${name}"`);
  }

  /** What the engine needs to start a VM from `ref` for `userId`; a source of another user is not found. */
  async resolve(userId: number, ref: VmSourceRef): Promise<ResolvedSource> {
    if (ref.kind === 'template' && ref.id === DEFAULT_TEMPLATE_ID) return { ref, source: { kind: 'template' }, shape: null, baseSnapshotId: null, pythonContext: null };
    if (ref.kind === 'template') {
      const template = await this.ownedTemplate(userId, ref.id);
      if (template.status !== 'ready' || !template.image) {
        throw new AppError('CONFLICT', `template ${template.name} is ${template.status}${template.error ? `: ${template.error}` : ''}; VMs start from ready templates only`);
      }
      this.assertLocal(template.nodeId, `template ${template.name}`);
      // The image's own environment is applied in the guest (the agent's --env-file), not here.
      const { env: _env, ...image } = template.image;
      return { ref, source: { kind: 'template', image }, shape: null, baseSnapshotId: null, pythonContext: null };
    }
    const snapshot = await this.ownedSnapshot(userId, ref.id);
    if (snapshot.status !== 'ready') throw new AppError('CONFLICT', `snapshot ${snapshot.name} is still being taken; retry in a moment`);
    this.assertLocal(snapshot.nodeId, `snapshot ${snapshot.name}`);
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
    if (ref.kind === 'template' && ref.id === DEFAULT_TEMPLATE_ID) return { ...ref, name: DEFAULT_TEMPLATE_ID };
    const found = ref.kind === 'snapshot' ? await findSnapshot(this.database.db, ref.id) : await findTemplate(this.database.db, ref.id);
    return { ...ref, name: found?.name ?? ref.id };
  }

  /** Throws CONFLICT when the user already has a snapshot or template of this name (or it is the built-in one's). */
  async assertNameFree(db: Executor, userId: number, name: string): Promise<void> {
    if (name === DEFAULT_TEMPLATE_ID) throw new AppError('CONFLICT', `"${DEFAULT_TEMPLATE_ID}" is the built-in template's name`);
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

  /** Snapshot and template files live on the node that made them (until cluster mode moves VMs there). */
  assertLocal(nodeId: string, what: string): void {
    if (nodeId !== this.nodeId()) throw new AppError('VM_UNAVAILABLE', `${what} is on node ${nodeId}, not on this one (${this.nodeId()}): send the request to that node`);
  }
}
