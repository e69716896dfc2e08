/** POST /v1/sessions/{session_id}/files/rename: moves a file or directory in the session's VM. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import { GuestPath } from '../../schemas/guest-path.ts';
import type { App, RouteContext } from '../../types.ts';
import { fileEntryOf } from './list.ts';

export function registerFileRename(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/v1/sessions/:session_id/files/rename',
    {
      schema: {
        tags: ['files'],
        summary: 'Rename or move a file or directory in the VM',
        description:
          "Moves `from` to `to` (across filesystems too, as `mv` does); `to` is the new path itself, never a directory to move into. Without `overwrite`, 409 when something is at `to`; with it, a file there is replaced (a directory only by a directory, and only an empty one). Answers what is at `to` afterwards. Starts the session's VM if it has none (like upload and download). A relative path is resolved against /root.",
        security: BEARER_OR_API_KEY,
        params: Type.Object({ session_id: Type.String({ minLength: 1, maxLength: 64 }) }),
        body: Type.Object(
          {
            from: GuestPath('What to move'),
            to: GuestPath('Its new path'),
            overwrite: Type.Optional(Type.Boolean({ default: false, description: 'Replace what is at `to`' })),
          },
          { additionalProperties: false },
        ),
        response: authedResponses(
          { 200: Type.Ref('FileEntry') },
          {
            404: 'No such session among yours, nothing at `from`, or no directory to hold `to`',
            409: 'Something is at `to` (without overwrite), or it cannot be replaced',
          },
        ),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const { from, to, overwrite } = request.body;
      return fileEntryOf(await services.sandbox.files.rename(principalOf(request), request.params.session_id, { from, to, overwrite: overwrite ?? false }));
    },
  );
}
