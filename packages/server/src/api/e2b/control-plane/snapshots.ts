/**
 * E2B's persistent snapshots as sandboxd snapshots. A snapshot's E2B id is its sandboxd name (unique among the
 * caller's snapshots and templates), so `Sandbox.create(snapshotId)` starts from it like from a template name.
 * - POST /sandboxes/{sandboxID}/snapshots (`createSnapshot`): snapshots the running sandbox (its memory, processes
 *   and disk; the VM goes on running); 201 `{snapshotID, names}`. Without a name, one is made up.
 * - GET /snapshots (`listSnapshots`): the caller's snapshots, newest first, by sandbox and name, a page at a time.
 * - DELETE /templates/{templateID} (`deleteSnapshot`): deletes the caller's snapshot of that name (or sandboxd
 *   id); 204, 404 for none. Refused (409) while a sandbox builds its disk on it, the one it was taken of included:
 *   kill those first. Templates are not deleted here.
 */
import { randomBytes } from 'node:crypto';
import { AppError, notFound } from '../../../core/errors.ts';
import type { Snapshot } from '../../../model.ts';
import { principalOf } from '../../authentication.ts';
import type { App, RouteContext } from '../../types.ts';
import { ownedSandbox } from './owned-sandbox.ts';
import { CreateSnapshotBody, ListSnapshotsQuery, SandboxParams, TemplateParams } from './schemas.ts';

/** The most snapshots one page answers when the caller names no limit. */
const DEFAULT_LIMIT = 100;

/** E2B's `SnapshotInfo`: the id `Sandbox.create` takes, and the names it goes by. */
function snapshotInfoOf(snapshot: Snapshot) {
  return { snapshotID: snapshot.name, names: [snapshot.name] };
}

export function registerSandboxSnapshots(app: App, { services, requireAuth }: RouteContext): void {
  const { sandbox } = services;
  app.post(
    '/sandboxes/:sandboxID/snapshots',
    { schema: { hide: true, params: SandboxParams, body: CreateSnapshotBody }, onRequest: requireAuth },
    async (request, reply) => {
      const principal = principalOf(request);
      const { sandboxID } = request.params;
      const { vm, state } = await ownedSandbox(services, principal, sandboxID);
      if (state !== 'running') throw new AppError('CONFLICT', `sandbox ${sandboxID} is paused: connect to it first, then snapshot it`);
      const name = request.body.name ?? `snapshot-${randomBytes(6).toString('hex')}`;
      const snapshot = await sandbox.vms.snapshot(principal, vm.id, { name, metadata: { sandboxID } });
      reply.code(201);
      return snapshotInfoOf(snapshot);
    },
  );

  app.get('/snapshots', { schema: { hide: true, querystring: ListSnapshotsQuery }, onRequest: requireAuth }, async (request, reply) => {
    const { sandboxID, name, limit, nextToken } = request.query;
    const page = await sandbox.snapshots.listPage(principalOf(request), {
      ...(sandboxID !== undefined ? { sessionId: sandboxID } : {}),
      ...(name !== undefined ? { name } : {}),
      ...(nextToken ? { cursor: nextToken } : {}),
      limit: limit ?? DEFAULT_LIMIT,
    });
    if (page.nextCursor) reply.header('x-next-token', page.nextCursor);
    return page.items.map(snapshotInfoOf);
  });

  app.delete('/templates/:templateID', { schema: { hide: true, params: TemplateParams }, onRequest: requireAuth }, async (request, reply) => {
    const principal = principalOf(request);
    const { templateID } = request.params;
    const ref = await sandbox.sources.byName(principal.userId, templateID).catch(() => null);
    const snapshotId = ref?.kind === 'snapshot' ? ref.id : templateID.startsWith('snap_') ? templateID : null;
    if (!snapshotId) throw notFound(`snapshot ${templateID}`);
    await sandbox.snapshots.delete(principal, snapshotId);
    return reply.code(204).send();
  });
}
