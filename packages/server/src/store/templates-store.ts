/** Persistence of templates built from OCI images, and their build logs. JSON columns are parsed here, once. */
import type { Template, TemplateBuildArgs, TemplateImageRecord } from '../model.ts';
import type { TemplateRow } from './schema.ts';
import type { Executor } from './database.ts';

/** What a build may change on its template. */
export type TemplateChanges = Partial<Pick<Template, 'status' | 'imageDigest' | 'image' | 'step' | 'error' | 'updatedAt' | 'readyAt'>>;

function toTemplate(row: TemplateRow): Template {
  return {
    id: row.id,
    userId: row.user_id,
    name: row.name,
    status: row.status,
    ociImage: row.oci_image,
    imageDigest: row.image_digest,
    buildArgs: JSON.parse(row.build_args) as TemplateBuildArgs,
    vcpuCount: row.vcpu_count,
    memoryMb: row.memory_mb,
    nodeId: row.node_id,
    image: row.image === null ? null : (JSON.parse(row.image) as TemplateImageRecord),
    step: row.step,
    error: row.error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    readyAt: row.ready_at,
  };
}

export async function insertTemplate(db: Executor, template: Template): Promise<Template> {
  const row = await db
    .insertInto('templates')
    .values({
      id: template.id,
      user_id: template.userId,
      name: template.name,
      status: template.status,
      oci_image: template.ociImage,
      image_digest: template.imageDigest,
      build_args: JSON.stringify(template.buildArgs),
      vcpu_count: template.vcpuCount,
      memory_mb: template.memoryMb,
      node_id: template.nodeId,
      image: template.image === null ? null : JSON.stringify(template.image),
      step: template.step,
      error: template.error,
      created_at: template.createdAt,
      updated_at: template.updatedAt,
      ready_at: template.readyAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toTemplate(row);
}

export async function findTemplate(db: Executor, id: string): Promise<Template | undefined> {
  const row = await db.selectFrom('templates').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toTemplate(row);
}

export async function findTemplateByName(db: Executor, userId: number, name: string): Promise<Template | undefined> {
  const row = await db.selectFrom('templates').selectAll().where('user_id', '=', userId).where('name', '=', name).executeTakeFirst();
  return row && toTemplate(row);
}

/** The user's templates, newest first. */
export async function listTemplates(db: Executor, userId: number, limit: number, offset: number): Promise<Template[]> {
  const rows = await db
    .selectFrom('templates')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
  return rows.map(toTemplate);
}

/** Builds still marked under way on a node (its process died while they ran). */
export async function listBuildingTemplatesOfNode(db: Executor, nodeId: string): Promise<Template[]> {
  const rows = await db.selectFrom('templates').selectAll().where('node_id', '=', nodeId).where('status', '=', 'building').execute();
  return rows.map(toTemplate);
}

/** How many of a user's templates are `building` (under way or queued). */
export async function countBuildingTemplatesOfUser(db: Executor, userId: number): Promise<number> {
  const row = await db
    .selectFrom('templates')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('user_id', '=', userId)
    .where('status', '=', 'building')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Updates a template only while it is `building`; returns the new record, or undefined. */
export async function updateBuildingTemplate(db: Executor, id: string, changes: TemplateChanges): Promise<Template | undefined> {
  const row = await db
    .updateTable('templates')
    .set({
      ...(changes.status !== undefined ? { status: changes.status } : {}),
      ...(changes.imageDigest !== undefined ? { image_digest: changes.imageDigest } : {}),
      ...(changes.image !== undefined ? { image: changes.image === null ? null : JSON.stringify(changes.image) } : {}),
      ...(changes.step !== undefined ? { step: changes.step } : {}),
      ...(changes.error !== undefined ? { error: changes.error } : {}),
      ...(changes.updatedAt !== undefined ? { updated_at: changes.updatedAt } : {}),
      ...(changes.readyAt !== undefined ? { ready_at: changes.readyAt } : {}),
    })
    .where('id', '=', id)
    .where('status', '=', 'building')
    .returningAll()
    .executeTakeFirst();
  return row && toTemplate(row);
}

export async function deleteTemplateRow(db: Executor, id: string): Promise<boolean> {
  const result = await db.deleteFrom('templates').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function appendTemplateLog(db: Executor, templateId: string, lines: string[], at: string): Promise<void> {
  if (lines.length === 0) return;
  await db
    .insertInto('template_build_logs')
    .values(lines.map((line) => ({ template_id: templateId, line, created_at: at })))
    .execute();
}

/** Log lines of a build after `afterId`, oldest first (poll with the last id seen). */
export async function listTemplateLog(
  db: Executor,
  templateId: string,
  afterId: number,
  limit: number,
): Promise<{ id: number; line: string; createdAt: string }[]> {
  const rows = await db
    .selectFrom('template_build_logs')
    .select(['id', 'line', 'created_at'])
    .where('template_id', '=', templateId)
    .where('id', '>', afterId)
    .orderBy('id', 'asc')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ id: row.id, line: row.line, createdAt: row.created_at }));
}
