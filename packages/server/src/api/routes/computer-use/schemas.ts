/** Schemas of the computer-use operations (viewer URLs, stored recordings); the proxy passes the VM's own answers. */
import { Type } from 'typebox';
import type { DesktopRecordingRow } from '../../../store/desktop-recordings-store.ts';
import { StringEnum } from '../../schemas/common.ts';

export const ViewerUrlResponse = Type.Object(
  {
    session_id: Type.String(),
    viewer_url: Type.String({ description: "sandboxd's own noVNC viewer page for the desktop (nothing of the VM's is served to it), its VNC token in the fragment (`#token=…`); opens in any browser without other credentials while it is valid" }),
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
    status: StringEnum(['saving', 'ready', 'failed'], { description: '"saving" while the MP4 is copied from the VM into the object store, then "ready" (downloadable) or "failed"' }),
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

export function toDesktopRecording(row: DesktopRecordingRow) {
  return {
    recording_id: row.id,
    session_id: row.session_id,
    vm_id: row.vm_id,
    status: row.status as 'saving' | 'ready' | 'failed',
    duration_seconds: row.duration_seconds,
    size_bytes: row.size_bytes,
    width: row.width,
    height: row.height,
    error: row.error,
    started_at: row.started_at,
    stopped_at: row.stopped_at,
    saved_at: row.saved_at,
    download_url: row.status === 'ready' ? `/v1/sessions/${row.session_id}/recordings/${row.id}/download` : null,
  };
}
