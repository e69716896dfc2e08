/**
 * The desktop service's wire shapes (the computer-use API in desktop VMs, `src/desktop/`), shared with the host,
 * which proxies that API and saves its recordings. The public client library keeps its own copy: it has no
 * dependencies by design.
 */

/** The actions of Anthropic's computer-use tool, as the desktop service takes them. */
export const DESKTOP_ACTIONS = [
  'screenshot',
  'mouse_move',
  'left_click',
  'right_click',
  'middle_click',
  'double_click',
  'triple_click',
  'left_click_drag',
  'left_mouse_down',
  'left_mouse_up',
  'scroll',
  'type',
  'key',
  'hold_key',
  'cursor_position',
  'wait',
] as const;
export type DesktopActionName = (typeof DESKTOP_ACTIONS)[number];

/** A recording as the desktop service reports it (`POST /recording/stop`, `GET /recordings`). */
export interface DesktopRecording {
  id: string;
  status: 'recording' | 'ready' | 'failed';
  started_at: string;
  stopped_at: string | null;
  /** What ffprobe reads from the finished file; null while recording. */
  duration_seconds: number | null;
  size_bytes: number | null;
  framerate: number;
  width: number;
  height: number;
  error: string | null;
}
