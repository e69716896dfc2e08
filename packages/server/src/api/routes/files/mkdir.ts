/** POST /v1/sessions/{session_id}/files/mkdir: makes a directory in the session's VM. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import { GuestPath } from '../../schemas/guest-path.ts';
import type { App, RouteContext } from '../../types.ts';

export function registerFileMkdir(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/v1/sessions/:session_id/files/mkdir',
    {
      schema: {
        tags: ['files'],
        summary: 'Make a directory in the VM',
        description:
          "With `parents` (the default) missing parents are made too, like `mkdir -p`. `created` is false when the directory was already there. Starts the session's VM if it has none (like upload and download). A relative path is resolved against /root.",
        security: BEARER_OR_API_KEY,
        params: Type.Object({ session_id: Type.String({ minLength: 1, maxLength: 64 }) }),
        body: Type.Object(
          {
            path: GuestPath('The directory'),
            parents: Type.Optional(Type.Boolean({ default: true, description: 'Make missing parents too (default true)' })),
          },
          { additionalProperties: false },
        ),
        response: authedResponses(
          { 200: Type.Object({ path: Type.String({ description: 'The directory, absolute' }), created: Type.Boolean() }) },
          { 404: 'No such session among yours, or (without parents) no parent directory', 409: 'A file is in the way' },
        ),
      },
      onRequest: requireAuth,
    },
    async (request) => services.sandbox.files.mkdir(principalOf(request), request.params.session_id, request.body.path, request.body.parents ?? true),
  );
}
