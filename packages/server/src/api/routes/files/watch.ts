/**
 * GET /v1/sessions/{session_id}/files/watch?path=&recursive=: changes under a directory of the session's VM as they
 * happen (core/file-watch.ts), as Server-Sent Events or NDJSON.
 */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY, byMediaType, StringEnum } from '../../schemas/common.ts';
import { GuestPath } from '../../schemas/guest-path.ts';
import type { App, RouteContext } from '../../types.ts';
import { EventWriter, streamFormatOf } from '../processes/output-stream.ts';

export const FileWatchEvent = Type.Object(
  {
    type: StringEnum(['start', 'create', 'write', 'remove', 'rename', 'chmod', 'overflow', 'error', 'end'], {
      description:
        '`start` first (the watch is in place: every later change is reported); then a change: `create` (also the new name of a rename), `write`, `remove`, `rename` (the old name), `chmod`; `overflow` when the guest dropped events (too many at once); `error` (a watch could not be added); `end` last when the watched directory was removed or moved away, or the watch failed',
    }),
    path: Type.Optional(Type.String({ description: 'The path changed (absolute); for `start` and `end` the watched directory' })),
    is_dir: Type.Optional(Type.Boolean({ description: 'The path is a directory' })),
    recursive: Type.Optional(Type.Boolean({ description: '`start`: the tree under the directory is watched' })),
    message: Type.Optional(Type.String({ description: '`error` and `end`: what happened' })),
  },
  { $id: 'FileWatchEvent', title: 'FileWatchEvent' },
);

export function registerFileWatch(app: App, { services, requireAuth }: RouteContext): void {
  const streams = new Set<AbortController>();
  // Before the server waits for open connections to finish: a watch would not end by itself.
  app.addHook('preClose', async () => {
    for (const stream of streams) stream.abort();
  });

  app.get(
    '/v1/sessions/:session_id/files/watch',
    {
      schema: {
        tags: ['files'],
        summary: 'Watch a directory in the VM',
        description:
          "Changes under a directory of the session's VM as they happen, until the client closes the stream: `Accept: text/event-stream` for Server-Sent Events, anything else for NDJSON (one FileWatchEvent per line; empty lines are keep-alives). The first event, `start`, says the watch is in place. With `recursive`, directories created later are watched too (what is already in them is reported as created). Starts the session's VM if it has none. A session holds at most 16 watches at once (429 beyond).",
        security: BEARER_OR_API_KEY,
        params: Type.Object({ session_id: Type.String({ minLength: 1, maxLength: 64 }) }),
        querystring: Type.Object({
          path: GuestPath('The directory'),
          recursive: Type.Optional(Type.Boolean({ default: false, description: 'Watch the whole tree under the directory' })),
        }),
        response: authedResponses(
          {
            200: byMediaType('The changes as they happen', {
              'application/x-ndjson': Type.String({ description: 'One FileWatchEvent per line (empty lines are keep-alives)' }),
              'text/event-stream': Type.String({ description: 'Server-Sent Events: `event:` (the type), `data:` (a FileWatchEvent)' }),
            }),
          },
          {
            404: 'No such session among yours, or nothing at the path',
            409: 'The path is not a directory',
            429: 'The session holds the most watches it may at once',
          },
        ),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      const recursive = request.query.recursive ?? false;
      const controller = new AbortController();
      // Errors before the watch is in place are ordinary answers (404, 409, 429).
      const watch = await services.sandbox.files
        .watch(principalOf(request), request.params.session_id, request.query.path, { recursive, signal: controller.signal })
        .catch((error: unknown) => {
          controller.abort();
          throw error;
        });
      reply.hijack();
      streams.add(controller);
      reply.raw.on('close', () => controller.abort());
      const writer = new EventWriter(reply.raw, streamFormatOf(request.headers.accept) ?? 'ndjson', request.id, controller.signal);
      try {
        await writer.write({ type: 'start', path: watch.path, recursive });
        for await (const event of watch.events) {
          if (event.type === 'gone') await writer.write({ type: 'end', path: watch.path, message: 'the directory was removed or moved away' });
          else if (event.type === 'overflow' || event.type === 'error') await writer.write(event);
          else await writer.write({ type: event.type, path: event.path, is_dir: event.isDir });
        }
      } catch (error) {
        if (!controller.signal.aborted) {
          request.log.warn({ err: error }, 'file watch ended');
          await writer.write({ type: 'end', path: watch.path, message: (error as Error).message }).catch(() => undefined);
        }
      } finally {
        streams.delete(controller);
        controller.abort();
        writer.end();
      }
    },
  );
}
