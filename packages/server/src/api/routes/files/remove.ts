/** DELETE /v1/sessions/{session_id}/files?path=&recursive=: removes a path in the session's VM. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import { GuestPath } from '../../schemas/guest-path.ts';
import type { App, RouteContext } from '../../types.ts';

export function registerFileRemove(app: App, { services, requireAuth }: RouteContext): void {
  app.delete(
    '/v1/sessions/:session_id/files',
    {
      schema: {
        tags: ['files'],
        summary: 'Remove a file or directory in the VM',
        description:
          "A file, a symlink (not its target) or an empty directory; with `recursive=true` a directory and everything in it. `removed` is false when nothing was there (removing is idempotent). The root directory is refused. Starts the session's VM if it has none (like upload and download). A relative path is resolved against /root.",
        security: BEARER_OR_API_KEY,
        params: Type.Object({ session_id: Type.String({ minLength: 1, maxLength: 64 }) }),
        querystring: Type.Object({
          path: GuestPath('The path'),
          recursive: Type.Optional(Type.Boolean({ default: false, description: 'Remove a directory with its contents' })),
        }),
        response: authedResponses(
          { 200: Type.Object({ path: Type.String({ description: 'The path, absolute' }), removed: Type.Boolean() }) },
          { 404: 'No such session among yours', 409: 'A directory that is not empty, without recursive' },
        ),
      },
      onRequest: requireAuth,
    },
    async (request) => services.sandbox.files.remove(principalOf(request), request.params.session_id, request.query.path, request.query.recursive ?? false),
  );
}
