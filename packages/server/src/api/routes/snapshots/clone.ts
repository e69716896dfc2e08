/** POST /v1/snapshots/{snapshot_id}/clone: fork one of the caller's snapshots into new VMs (as POST /v1/vms/{vm_id}/clone does). */
import { Type } from 'typebox';
import { MAX_CLONES } from '../../../core/snapshots.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toVmRecord } from '../sessions/schemas.ts';
import { untilClientGoes } from '../vms/clone.ts';
import { toSnapshotRecord } from './schemas.ts';

export function registerCloneSnapshot(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/v1/snapshots/:snapshot_id/clone',
    {
      schema: {
        tags: ['snapshots'],
        summary: 'Clone a snapshot (fork it into new VMs)',
        description:
          `Starts \`count\` new VMs (1 to ${MAX_CLONES}, default 1; your plan may allow fewer in one request: \`maxForkCount\`, free 10) from your snapshot, named by its id or its name, each in a session of its own with the lifetime, metadata and env of the session of the VM the snapshot was taken of (the defaults once that VM's record is gone). ` +
          "Clones start where the snapshot was (files, processes, open ports, Python variables) and diverge from there, each with its own identity; they map the snapshot's memory copy-on-write. " +
          'They start a few at a time (`SANDBOXD_FORK_CONCURRENCY`). All or nothing: if one cannot start, or the client goes away before the answer, no more start, those that did are killed, and their sessions and VM records are deleted; the answer is the first error.',
        security: BEARER_OR_API_KEY,
        params: Type.Object({ snapshot_id: Type.String({ minLength: 1, maxLength: 64, description: "The snapshot's id, or its name" }) }),
        body: Type.Union([
          Type.Object({ count: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_CLONES, description: 'How many clones (default 1)' })) }),
          Type.Null(),
        ]),
        response: authedResponses(
          { 200: Type.Object({ snapshot: Type.Ref('SnapshotRecord'), clones: Type.Array(Type.Ref('VmRecord')) }) },
          {
            404: 'No such snapshot among yours',
            409: 'The snapshot is still being taken',
            429: "More clones than your plan's fork cap (maxForkCount), or more running VMs or vCPUs than your plan allows (checked before any starts, and again by each)",
            503: 'A clone could not start, or the snapshot is on another node',
          },
        ),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      const count = request.body?.count ?? 1;
      const { snapshot, clones } = await untilClientGoes(reply, (signal) =>
        services.sandbox.snapshots.cloneSnapshot(principalOf(request), request.params.snapshot_id, { count, signal }),
      );
      const now = services.clock.now();
      return { snapshot: toSnapshotRecord(snapshot), clones: clones.map((clone) => toVmRecord(clone.vm, now)) };
    },
  );
}
