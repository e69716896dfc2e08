/** Schemas of the computer-use operations (viewer URLs, stored recordings); the proxy passes the VM's own answers. */
import { Type } from 'typebox';
import { StringEnum } from '../../schemas/common.ts';
import type { StoredRecording } from '../../../activity.ts';

export const ViewerUrlResponse = Type.Object(
  {
    session_id: Type.String(),
    viewer_url: Type.String({
      description:
        "sandboxd's own noVNC viewer page for the desktop (nothing of the VM's is served to it), its VNC token in the fragment (`#token=…`); opens in any browser without other credentials while it is valid",
    }),
    websocket_url: Type.String({ description: 'The VNC WebSocket (RFB over binary frames) the page connects to, for other VNC clients' }),
    view_only: Type.Boolean({ description: 'Input from this viewer is dropped by the server (not only hidden by the page)' }),
    expires_at: Type.String({ format: 'date-time', description: 'Both URLs stop working then; a viewer connected by then stays connected' }),
  },
  { $id: 'ViewerUrlResponse', title: 'ViewerUrlResponse' },
);

export const DesktopRecording = Type.Object(
  {
    recording_id: Type.String({ description: 'The id the desktop service gave it (`rec_…`)' }),
    session_id: Type.String(),
    vm_id: Type.String(),
    status: StringEnum(['saving', 'ready', 'failed'], {
      description: '"saving" while the MP4 is copied from the VM into the object store, then "ready" (downloadable) or "failed"',
    }),
    duration_seconds: Type.Union([Type.Number(), Type.Null()]),
    size_bytes: Type.Union([Type.Integer(), Type.Null()]),
    width: Type.Integer(),
    height: Type.Integer(),
    error: Type.Union([Type.String(), Type.Null()]),
    started_at: Type.String({ format: 'date-time' }),
    stopped_at: Type.String({ format: 'date-time' }),
    saved_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    download_url: Type.Union([Type.String(), Type.Null()], { description: 'Where the MP4 downloads from once ready (same credentials as this API)' }),
  },
  { $id: 'DesktopRecording', title: 'DesktopRecording' },
);

export const DesktopRecordingList = Type.Object(
  { recordings: Type.Array(Type.Ref('DesktopRecording')), count: Type.Integer() },
  { $id: 'DesktopRecordingList', title: 'DesktopRecordingList' },
);

export const COMPUTER_USE_SCHEMAS = [ViewerUrlResponse, DesktopRecording, DesktopRecordingList];

export function toDesktopRecording(recording: StoredRecording) {
  return {
    recording_id: recording.id,
    session_id: recording.sessionId,
    vm_id: recording.vmId,
    status: recording.status,
    duration_seconds: recording.durationSeconds,
    size_bytes: recording.sizeBytes,
    width: recording.width,
    height: recording.height,
    error: recording.error,
    started_at: recording.startedAt,
    stopped_at: recording.stoppedAt,
    saved_at: recording.savedAt,
    download_url: recording.status === 'ready' ? `/v1/sessions/${recording.sessionId}/recordings/${recording.id}/download` : null,
  };
}
