/** GET /v1/sessions/{session_id}/files/stat?path=: what is at a path in the session's VM. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import { GuestPath } from '../../schemas/guest-path.ts';
import type { App, RouteContext } from '../../types.ts';
import { fileEntryOf } from './list.ts';

export function registerFileStat(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/sessions/:session_id/files/stat',
    {
      schema: {
        tags: ['files'],
        summary: 'Describe a path in the VM',
        description:
          "Type, size, mode, modification time and, for a symlink, its target (symlinks are not followed). Starts the session's VM if it has none (like upload and download). A relative path is resolved against /root.",
        security: BEARER_OR_API_KEY,
        params: Type.Object({ session_id: Type.String({ minLength: 1, maxLength: 64 }) }),
        querystring: Type.Object({ path: GuestPath('The path') }),
        response: authedResponses({ 200: Type.Ref('FileEntry') }, { 404: 'No such session among yours, or nothing at the path' }),
      },
      onRequest: requireAuth,
    },
    async (request) => fileEntryOf(await services.sandbox.files.stat(principalOf(request), request.params.session_id, request.query.path)),
  );
}
