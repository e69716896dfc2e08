/** GET /v1/volumes: the caller's volumes, newest first. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toVolumeRecord } from './schemas.ts';

export function registerListVolumes(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/volumes',
    {
      schema: {
        tags: ['volumes'],
        summary: "List the caller's volumes",
        security: BEARER_OR_API_KEY,
        querystring: Type.Object({
          limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
          offset: Type.Integer({ minimum: 0, maximum: 2147483647, default: 0 }),
        }),
        response: authedResponses({ 200: Type.Array(Type.Ref('VolumeRecord')) }),
      },
      onRequest: requireAuth,
    },
    async (request) => (await services.sandbox.volumes.list(principalOf(request), request.query.limit, request.query.offset)).map(toVolumeRecord),
  );
}
