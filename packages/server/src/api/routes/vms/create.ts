/** POST /v1/vms: bind a new VM (lifetime, memory, vCPUs) to a session that has none running. */
import { Type } from 'typebox';
import { AppError } from '../../../core/errors.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { LifetimeSeconds, MemoryMb, toVmRecord, VcpuCount } from '../sessions/schemas.ts';

const VmCreateRequest = Type.Object({
  session_id: Type.String({ minLength: 1, maxLength: 64 }),
  vm_lifetime_seconds: Type.Optional(LifetimeSeconds),
  memory_mb: Type.Optional(MemoryMb),
  vcpu_count: Type.Optional(VcpuCount),
  snapshot: Type.Optional(Type.Unknown({ description: 'Restore from a named snapshot: not implemented yet (501)' })),
  snapshot_name: Type.Optional(Type.Unknown({ description: 'Not implemented yet (501)' })),
  image: Type.Optional(Type.Unknown({ description: 'Alternate image: not implemented yet (501)' })),
  volumes: Type.Optional(Type.Unknown({ description: 'Persistent volumes: not implemented yet (501)' })),
  api_key: Type.Optional(Type.String()),
});

export function registerCreateVm(app: App, { services, requireAuthOrBodyKey }: RouteContext): void {
  app.post(
    '/v1/vms',
    {
      schema: {
        tags: ['vms'],
        summary: 'Bind a new VM to a session',
        description:
          'Starts a VM for the session with the given lifetime, memory and vCPUs (defaults: the session\'s). The session must have no running VM (409). ' +
          'Snapshots, alternate images and volumes answer 501 until they are built.',
        security: BEARER_OR_API_KEY,
        body: VmCreateRequest,
        response: authedResponses({ 200: Type.Ref('VmRecord') }, { 404: 'No such session among yours', 409: 'The session already has a running VM', 429: 'Plan quota exceeded', 501: 'Option not implemented yet', 503: 'The VM could not start', 507: 'The server is low on disk space (HOST_STORAGE_LOW); no VM was started' }),
      },
      ...requireAuthOrBodyKey,
    },
    async (request) => {
      const { body } = request;
      for (const option of ['snapshot', 'snapshot_name', 'image', 'volumes'] as const) {
        if (body[option] !== undefined && body[option] !== null) throw new AppError('NOT_IMPLEMENTED', `not implemented yet: the "${option}" option`);
      }
      const principal = principalOf(request);
      const session = await services.sandbox.sessions.getOwned(principal, body.session_id);
      const { vm } = await services.sandbox.vms.createForSession(principal, session, {
        vcpuCount: body.vcpu_count ?? session.vcpuCount,
        memoryMb: body.memory_mb ?? session.memoryMb,
        lifetimeSeconds: body.vm_lifetime_seconds ?? session.vmLifetimeSeconds,
      });
      return toVmRecord(vm, services.clock.now());
    },
  );
}
