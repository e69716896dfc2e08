/** GET /v1/volumes/{volume_id}: one of the caller's volumes, with the VMs that have it mounted. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toVolumeRecord, VolumeIdParams } from './schemas.ts';

export function registerGetVolume(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/volumes/:volume_id',
    {
      schema: {
        tags: ['volumes'],
        summary: 'Get a volume',
        security: BEARER_OR_API_KEY,
        params: VolumeIdParams,
        response: authedResponses({ 200: Type.Ref('VolumeRecord') }, { 404: 'No such volume among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => toVolumeRecord(await services.sandbox.volumes.get(principalOf(request), request.params.volume_id)),
  );
}
