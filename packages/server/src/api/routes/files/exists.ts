/** GET /v1/sessions/{session_id}/files/exists?path=: whether anything is at a path in the session's VM. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import { GuestPath } from '../../schemas/guest-path.ts';
import type { App, RouteContext } from '../../types.ts';

export function registerFileExists(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/sessions/:session_id/files/exists',
    {
      schema: {
        tags: ['files'],
        summary: 'Whether a path exists in the VM',
        description:
          "`exists` is true for a file, a directory or a symlink (even a dangling one). Starts the session's VM if it has none (like upload and download). A relative path is resolved against /root.",
        security: BEARER_OR_API_KEY,
        params: Type.Object({ session_id: Type.String({ minLength: 1, maxLength: 64 }) }),
        querystring: Type.Object({ path: GuestPath('The path') }),
        response: authedResponses(
          { 200: Type.Object({ path: Type.String({ description: 'The path, absolute' }), exists: Type.Boolean() }) },
          { 404: 'No such session among yours' },
        ),
      },
      onRequest: requireAuth,
    },
    async (request) => services.sandbox.files.exists(principalOf(request), request.params.session_id, request.query.path),
  );
}
