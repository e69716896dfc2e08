/** DELETE /v1/volumes/{volume_id}: delete a volume no VM has mounted, with its data. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { VolumeIdParams } from './schemas.ts';

export function registerDeleteVolume(app: App, { services, requireAuth }: RouteContext): void {
  app.delete(
    '/v1/volumes/:volume_id',
    {
      schema: {
        tags: ['volumes'],
        summary: 'Delete a volume',
        description: 'Deletes the volume and everything on it. Refused (409) while a VM that has not ended has it mounted.',
        security: BEARER_OR_API_KEY,
        params: VolumeIdParams,
        response: authedResponses(
          { 204: Type.Null({ description: 'Deleted' }) },
          { 404: 'No such volume among yours', 409: 'A VM has it mounted', 503: 'It is on another node' },
        ),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      await services.sandbox.volumes.delete(principalOf(request), request.params.volume_id);
      return reply.code(204).send();
    },
  );
}
