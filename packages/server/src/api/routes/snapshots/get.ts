/** GET /v1/snapshots/{snapshot_id}: one of the caller's snapshots. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { SnapshotIdParams, toSnapshotRecord } from './schemas.ts';

export function registerGetSnapshot(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/snapshots/:snapshot_id',
    {
      schema: {
        tags: ['snapshots'],
        summary: 'Get a snapshot',
        security: BEARER_OR_API_KEY,
        params: SnapshotIdParams,
        response: authedResponses({ 200: Type.Ref('SnapshotRecord') }, { 404: 'No such snapshot among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => toSnapshotRecord(await services.sandbox.snapshots.get(principalOf(request), request.params.snapshot_id)),
  );
}
