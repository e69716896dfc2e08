/** POST /v1/vms/{vm_id}/clone: new VMs from one of the caller's snapshots or from the VM's current state. */
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { MAX_CLONES } from '../../../core/snapshots.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { SourceName, toVmRecord } from '../sessions/schemas.ts';
import { toSnapshotRecord } from '../snapshots/schemas.ts';
import { VmIdParams } from './params.ts';

export function registerCloneVm(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/v1/vms/:vm_id/clone',
    {
      schema: {
        tags: ['vms'],
        summary: 'Clone a VM',
        description:
          `Starts \`count\` new VMs (1 to ${MAX_CLONES}, default 1; your plan may allow fewer in one request: \`maxForkCount\`, free 10), each in a session of its own with the VM's lifetime, metadata and env, from your snapshot \`snapshot_name\`, or, without it, from the VM's current state: a live snapshot is taken for the purpose (named \`<vm_id>-clone-<time>\`, returned as \`snapshot\`; the VM's disk builds on it from then on, so it is kept while the VM lives). ` +
          "Clones start where the snapshot was (files, processes, open ports, Python variables) and diverge from there; each has its own identity (host name, machine id, boot id, random state); they map the snapshot's memory copy-on-write, so what they have not written is held once on the host. " +
          'They start a few at a time (`SANDBOXD_FORK_CONCURRENCY`). All or nothing: if one cannot start, or the client goes away before the answer, no more start, those that did are killed, and their sessions and VM records are deleted; the answer is the first error. ' +
          'POST /v1/snapshots/{snapshot}/clone does the same from a snapshot alone.',
        security: BEARER_OR_API_KEY,
        params: VmIdParams,
        body: Type.Union([
          Type.Object({
            snapshot_name: Type.Optional(SourceName),
            count: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_CLONES, description: 'How many clones (default 1)' })),
          }),
          Type.Null(),
        ]),
        response: authedResponses(
          {
            200: Type.Object({
              snapshot: Type.Ref('SnapshotRecord'),
              clones: Type.Array(Type.Ref('VmRecord')),
            }),
          },
          {
            404: 'No such VM or snapshot among yours',
            409: 'The VM is not running (to clone its current state), a process keeps one of its volumes busy (the message names the path), or the snapshot name is taken',
            429: "More clones than your plan's fork cap (maxForkCount), or more running VMs or vCPUs than your plan allows (checked before any starts, and again by each)",
            503: 'A clone could not start, or the VM or snapshot is on another node',
          },
        ),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      const body = request.body ?? {};
      const { snapshot, clones } = await untilClientGoes(reply, (signal) =>
        services.sandbox.snapshots.clone(principalOf(request), request.params.vm_id, { snapshotName: body.snapshot_name, count: body.count ?? 1, signal }),
      );
      const now = services.clock.now();
      return { snapshot: toSnapshotRecord(snapshot), clones: clones.map((clone) => toVmRecord(clone.vm, now)) };
    },
  );
}

/**
 * Runs `work` with a signal that fires when the client goes away before `work` is done (its connection closed):
 * a fork then stops and leaves nothing, since no one would learn of its clones.
 */
export async function untilClientGoes<T>(reply: FastifyReply, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const gone = new AbortController();
  const onClose = () => gone.abort();
  reply.raw.once('close', onClose);
  try {
    return await work(gone.signal);
  } finally {
    reply.raw.off('close', onClose);
  }
}
