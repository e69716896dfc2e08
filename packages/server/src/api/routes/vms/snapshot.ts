/** POST /v1/vms/{vm_id}/snapshot: snapshot a running VM, live (the spec's "VM snapshot"). */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { Metadata, SourceName } from '../sessions/schemas.ts';
import { toSnapshotRecord } from '../snapshots/schemas.ts';
import { VmIdParams } from './params.ts';

export function registerSnapshotVm(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/v1/vms/:vm_id/snapshot',
    {
      schema: {
        tags: ['vms'],
        summary: 'Snapshot a running VM',
        description:
          "Captures the VM's memory (processes, Python variables, open ports), device state and disk into a named snapshot while it runs: under KVM it is stopped only for the last memory pages and its device state; under TCG (no reliable dirty-page tracking) for the whole memory copy, about 1.5–2.5 s for a 512 MiB VM. `pause_ms` in the answer says how long; then it runs on. " +
          "Start VMs from it with `POST /v1/vms {\"snapshot\": name}`, a session's `snapshot`, or `POST /v1/vms/{vm_id}/clone`. It has the VM's vCPUs and memory; its disk layer holds only what changed since the VM's own start or previous snapshot. " +
          "The VM's volumes are unmounted in the guest for the capture and mounted again after it (409 naming the path if a process keeps one busy): the snapshot holds none of them, and VMs started from it mount only the volumes they ask for.",
        security: BEARER_OR_API_KEY,
        params: VmIdParams,
        body: Type.Object({ name: SourceName, metadata: Type.Optional(Metadata('Key/value pairs of the snapshot')) }),
        response: authedResponses(
          { 200: Type.Ref('SnapshotRecord') },
          {
            404: 'No such VM among yours',
            409: 'The name is taken, the VM is not running (paused: resume it first), or a process keeps one of its volumes busy (the message names the path)',
            503: 'The capture failed (the VM runs on as before), or the VM is on another node',
          },
        ),
      },
      onRequest: requireAuth,
    },
    async (request) => toSnapshotRecord(await services.sandbox.vms.snapshot(principalOf(request), request.params.vm_id, request.body)),
  );
}
