/** POST /v1/vms/{vm_id}/pause and /resume. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toVmRecord } from '../sessions/schemas.ts';
import { VmIdParams } from './params.ts';

const PauseResponse = Type.Intersect([
  Type.Ref('VmRecord'),
  Type.Object({
    pause: Type.Object({
      duration_ms: Type.Integer({ description: 'How long pausing took (the VM was stopped from its start)' }),
      memory_bytes: Type.Integer({ description: 'Bytes its saved memory takes on disk' }),
      disk_bytes: Type.Integer({ description: 'Bytes its disk layer takes' }),
    }),
  }),
]);

export function registerPauseVm(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/v1/vms/:vm_id/pause',
    {
      schema: {
        tags: ['vms'],
        summary: 'Pause a running VM',
        description:
          "Saves the VM's memory, processes and disk to the node's disk and ends its QEMU: it holds no memory or CPU and does not count against the plan's running VMs, and its lifetime stops counting. " +
          "`POST /v1/vms/{vm_id}/resume` (or the session's next execute, upload, download or terminal) brings the same VM back, with its files, processes, open ports and Python variables. Executions running in it are recorded failed (their processes go on after the resume). " +
          'Its read-write volumes stay mounted (flushed, and no other VM may mount them meanwhile) and come back with it; read-only ones are unmounted for the pause and mounted again at the resume.',
        security: BEARER_OR_API_KEY,
        params: VmIdParams,
        response: authedResponses(
          { 200: PauseResponse },
          {
            404: 'No such VM among yours',
            409: 'The VM is not running (already paused, ended or starting), or a process keeps one of its read-only volumes busy (the message names the path)',
            503: 'Pausing failed (the VM runs on), or the VM is on another node',
          },
        ),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const { vm, outcome } = await services.sandbox.vms.pause(principalOf(request), request.params.vm_id);
      return {
        ...toVmRecord(vm, services.clock.now()),
        pause: { duration_ms: Math.round(outcome.durationMs), memory_bytes: outcome.memoryBytes, disk_bytes: outcome.diskBytes },
      };
    },
  );
  app.post(
    '/v1/vms/:vm_id/resume',
    {
      schema: {
        tags: ['vms'],
        summary: 'Resume a paused VM',
        description:
          "Brings a paused VM back under the same id, with what it had when paused; its remaining lifetime counts from now. Counts against the plan's running VMs like a new one.",
        security: BEARER_OR_API_KEY,
        params: VmIdParams,
        response: authedResponses(
          { 200: Type.Ref('VmRecord') },
          {
            404: 'No such VM among yours',
            409: 'The VM is not paused',
            429: 'Plan quota exceeded',
            503: 'The VM could not resume (it stays paused), or it is on another node',
          },
        ),
      },
      onRequest: requireAuth,
    },
    async (request) => toVmRecord((await services.sandbox.vms.resume(principalOf(request), request.params.vm_id)).vm, services.clock.now()),
  );
}
