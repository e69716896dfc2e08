/** A desktop session's recordings saved to the object store: list, read, download the MP4, delete. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY, byMediaType, ListOffset } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toDesktopRecording } from './schemas.ts';

const params = Type.Object({
  session_id: Type.String(),
  recording_id: Type.String({ pattern: '^rec_[0-9a-f]{16}$', description: 'A recording id (`rec_` + 16 hex)' }),
});

export function registerRecordingRoutes(app: App, { services, requireAuth }: RouteContext): void {
  const { computerUse } = services.sandbox;
  app.get(
    '/v1/sessions/:session_id/recordings',
    {
      schema: {
        tags: ['computer-use'],
        summary: "A desktop session's saved recordings",
        description:
          'Screen recordings stopped through the computer-use proxy (`POST /v1/computeruse/{session_id}/recording/stop`), newest first: "saving" while the MP4 is copied from the VM, then "ready" or "failed". They outlive the VM.',
        security: BEARER_OR_API_KEY,
        params: Type.Object({ session_id: Type.String() }),
        querystring: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }), offset: ListOffset }),
        response: authedResponses({ 200: Type.Ref('DesktopRecordingList') }, { 404: 'No such session among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const recordings = await computerUse.listRecordings(
        principalOf(request),
        request.params.session_id,
        request.query.limit ?? 50,
        request.query.offset ?? 0,
      );
      return { recordings: recordings.map(toDesktopRecording), count: recordings.length };
    },
  );
  app.get(
    '/v1/sessions/:session_id/recordings/:recording_id',
    {
      schema: {
        tags: ['computer-use'],
        summary: 'A saved recording',
        security: BEARER_OR_API_KEY,
        params,
        response: authedResponses({ 200: Type.Ref('DesktopRecording') }, { 404: 'No such session or recording among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => toDesktopRecording(await computerUse.getRecording(principalOf(request), request.params.session_id, request.params.recording_id)),
  );
  app.get(
    '/v1/sessions/:session_id/recordings/:recording_id/download',
    {
      schema: {
        tags: ['computer-use'],
        summary: "A saved recording's MP4",
        description: 'The H.264 MP4, streamed from the object store. 409 while it is being saved or when saving failed.',
        security: BEARER_OR_API_KEY,
        params,
        response: {
          ...authedResponses({}, { 404: 'No such session or recording among yours', 409: 'The recording is not saved (yet)' }),
          200: byMediaType('The MP4', { 'video/mp4': Type.String({ format: 'binary' }) }),
        },
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      const { recording, stored } = await computerUse.downloadRecording(principalOf(request), request.params.session_id, request.params.recording_id);
      return reply
        .type('video/mp4')
        .header('content-length', stored.size)
        .header('content-disposition', `attachment; filename="${recording.id}.mp4"`)
        .send(stored.stream);
    },
  );
  app.delete(
    '/v1/sessions/:session_id/recordings/:recording_id',
    {
      schema: {
        tags: ['computer-use'],
        summary: 'Delete a saved recording',
        description: 'Removes the MP4 from the object store and its record. 409 while it is being saved.',
        security: BEARER_OR_API_KEY,
        params,
        response: authedResponses(
          { 200: Type.Ref('DesktopRecording') },
          { 404: 'No such session or recording among yours', 409: 'The recording is being saved' },
        ),
      },
      onRequest: requireAuth,
    },
    async (request) => toDesktopRecording(await computerUse.deleteRecording(principalOf(request), request.params.session_id, request.params.recording_id)),
  );
}
