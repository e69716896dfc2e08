/** GET /v1/snapshots: the caller's snapshots, newest first. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toSnapshotRecord } from './schemas.ts';

export function registerListSnapshots(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/snapshots',
    {
      schema: {
        tags: ['snapshots'],
        summary: "List the caller's snapshots",
        security: BEARER_OR_API_KEY,
        querystring: Type.Object({
          limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
          offset: Type.Integer({ minimum: 0, maximum: 2147483647, default: 0 }),
        }),
        response: authedResponses({ 200: Type.Array(Type.Ref('SnapshotRecord')) }),
      },
      onRequest: requireAuth,
    },
    async (request) => (await services.sandbox.snapshots.list(principalOf(request), request.query.limit, request.query.offset)).map(toSnapshotRecord),
  );
}
