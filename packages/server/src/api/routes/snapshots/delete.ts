/** DELETE /v1/snapshots/{snapshot_id}: delete a snapshot nothing builds on any more. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { SnapshotIdParams } from './schemas.ts';

export function registerDeleteSnapshot(app: App, { services, requireAuth }: RouteContext): void {
  app.delete(
    '/v1/snapshots/:snapshot_id',
    {
      schema: {
        tags: ['snapshots'],
        summary: 'Delete a snapshot',
        description: 'Deletes the snapshot and its files. Refused (409) while a VM that has not ended (running or paused) or another snapshot builds on it.',
        security: BEARER_OR_API_KEY,
        params: SnapshotIdParams,
        response: authedResponses(
          { 200: Type.Object({ deleted: Type.Boolean(), snapshot_id: Type.String(), name: Type.String() }) },
          {
            404: 'No such snapshot among yours',
            409: 'A VM or another snapshot builds on it, or it is still being taken',
            503: 'Its files are on another node',
          },
        ),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const snapshot = await services.sandbox.snapshots.delete(principalOf(request), request.params.snapshot_id);
      return { deleted: true, snapshot_id: snapshot.id, name: snapshot.name };
    },
  );
}
