/**
 * POST /download: `filename` + `session_id` (JSON or form) → `{content: base64, filename, size}`; with
 * `Accept: application/octet-stream` the raw bytes are streamed instead, for files of any size.
 */
import { Type } from 'typebox';
import { AppError } from '../../../core/errors.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY, byMediaType } from '../../schemas/common.ts';
import { GuestPath } from '../../schemas/guest-path.ts';
import type { App, RouteContext } from '../../types.ts';

const DownloadRequest = Type.Object({
  filename: GuestPath('The file to read'),
  session_id: Type.String({ minLength: 1, maxLength: 64 }),
  api_key: Type.Optional(Type.String()),
});

const DownloadResponse = Type.Object({
  content: Type.String({ description: 'The file, base64' }),
  filename: Type.String(),
  path: Type.String(),
  size: Type.Integer(),
});

function wantsRaw(accept: string | undefined): boolean {
  return !!accept && /application\/octet-stream/i.test(accept) && !/application\/json/i.test(accept);
}

export function registerDownload(app: App, { services, requireAuthOrBodyKey }: RouteContext): void {
  app.post(
    '/download',
    {
      schema: {
        tags: ['files'],
        summary: 'Download a file from the VM',
        description: `Answers JSON with base64 \`content\` (up to ${services.config.execution.downloadJsonLimitBytes} bytes, else 413), or the raw bytes when the request says \`Accept: application/octet-stream\`.`,
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        security: BEARER_OR_API_KEY,
        body: DownloadRequest,
        response: authedResponses(
          {
            200: byMediaType('The file: base64 in JSON, or its bytes with Accept: application/octet-stream', {
              'application/json': DownloadResponse,
              'application/octet-stream': Type.String({ format: 'binary' }),
            }),
          },
          { 404: 'No such session, or no such file', 413: 'Too large for JSON: ask for application/octet-stream' },
        ),
      },
      ...requireAuthOrBodyKey,
    },
    async (request, reply) => {
      const { filename, session_id } = request.body;
      const file = await services.sandbox.files.download(principalOf(request), session_id, filename);
      const name = file.path.split('/').pop() ?? 'file';
      if (wantsRaw(request.headers.accept)) {
        return reply
          .header('content-type', 'application/octet-stream')
          .header('content-length', String(file.size))
          .header('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(name)}`)
          .send(file.stream);
      }
      if (file.size > services.config.execution.downloadJsonLimitBytes) {
        file.stream.destroy();
        throw new AppError(
          'PAYLOAD_TOO_LARGE',
          `${file.path} is ${file.size} bytes, more than ${services.config.execution.downloadJsonLimitBytes} for a JSON answer; send Accept: application/octet-stream to stream it`,
        );
      }
      const chunks: Buffer[] = [];
      for await (const chunk of file.stream) chunks.push(chunk as Buffer);
      const content = Buffer.concat(chunks);
      return { content: content.toString('base64'), filename: name, path: file.path, size: content.length };
    },
  );
}
