/** POST /v1/sessions/{session_id}/files/write: several files written into the session's VM in one call. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import { GuestPath } from '../../schemas/guest-path.ts';
import type { App, RouteContext } from '../../types.ts';

/** Files one call may write. */
const MAX_FILES = 1000;

export function registerFileWrite(app: App, { services, requireAuth }: RouteContext): void {
  const limit = services.config.execution.uploadLimitBytes;
  app.post(
    '/v1/sessions/:session_id/files/write',
    {
      // The contents travel in the JSON body (base64 takes 4/3 of the bytes), up to the upload limit in all.
      bodyLimit: Math.ceil((limit * 4) / 3) + MAX_FILES * 4096,
      schema: {
        tags: ['files'],
        summary: 'Write several files into the VM',
        description: `Writes each file (\`content\` as UTF-8 text, or \`content_base64\`) at its path, making missing parent directories and replacing what was there; answers each path with its size. Every path is checked before anything is written; a file that fails stops the call with its error (those before it stay written). At most ${MAX_FILES} files and the upload limit in all; larger files go through POST /upload, which streams. Starts the session's VM if it has none. A relative path is resolved against /root.`,
        security: BEARER_OR_API_KEY,
        params: Type.Object({ session_id: Type.String({ minLength: 1, maxLength: 64 }) }),
        body: Type.Object(
          {
            files: Type.Array(
              Type.Object(
                {
                  path: GuestPath('Where to write it'),
                  content: Type.Optional(Type.String({ description: 'The contents as text (UTF-8)' })),
                  content_base64: Type.Optional(Type.String({ description: 'The contents as base64 (instead of content)' })),
                  mode: Type.Optional(Type.Integer({ minimum: 0, maximum: 0o7777, description: 'Permission bits (default 0o644 = 420)' })),
                },
                { additionalProperties: false },
              ),
              { minItems: 1, maxItems: MAX_FILES },
            ),
          },
          { additionalProperties: false },
        ),
        response: authedResponses(
          {
            200: Type.Object({
              files: Type.Array(Type.Object({ path: Type.String({ description: 'Absolute' }), size: Type.Integer({ description: 'Bytes written' }) })),
            }),
          },
          {
            400: 'A file with both or neither of content and content_base64, a path given twice, or the root',
            404: 'No such session among yours',
            409: 'A file is in the way of a directory',
            413: 'Over the upload limit',
          },
        ),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      // Checked by the service once the session is known to be the caller's (another user's is 404 whatever the body).
      const files = request.body.files.map((file) => ({ path: file.path, content: file.content, contentBase64: file.content_base64, mode: file.mode }));
      return { files: await services.sandbox.files.writeMany(principalOf(request), request.params.session_id, files, limit) };
    },
  );
}
