/**
 * Computer use: a desktop session (an X desktop with VNC in its own VM) driven by the actions AI agents use,
 * watched or taken over in a browser, and recorded.
 *
 *   const desktop = await client.computerUse.create({ screenWidth: 1280, screenHeight: 800 });
 *   await desktop.click(640, 400);
 *   await desktop.type('echo hello\n');
 *   const png = await desktop.screenshot();            // PNG bytes
 *   const { viewer_url } = await desktop.viewerUrl();  // open in a browser (noVNC)
 *   await desktop.startRecording(); ... await desktop.stopRecording();
 *
 * Every action goes through `POST /v1/computeruse/{session_id}/action` with Anthropic's computer-use tool
 * input, so `desktop.action(toolUse.input)` runs what a model asked for as it is.
 */
import type { CallOptions } from '../call-options.ts';
import { sleep, type Transport } from '../transport.ts';
import type { Sessions, SessionCreateOptions } from './sessions.ts';
import { lifetimeField } from './vms.ts';

/** The actions of Anthropic's computer-use tool, as the desktop service takes them. */
export const COMPUTER_ACTIONS = [
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

/** Anthropic's computer-use tool input (the fields each action needs; see the server's OpenAPI). */
export interface ComputerAction {
  action: (typeof COMPUTER_ACTIONS)[number];
  coordinate?: [number, number];
  start_coordinate?: [number, number];
  text?: string;
  scroll_direction?: 'up' | 'down' | 'left' | 'right';
  scroll_amount?: number;
  duration?: number;
}

export interface ComputerActionResult {
  action: string;
  elapsed_ms: number;
  /** A `screenshot` action's PNG, base64. */
  base64_image?: string;
  media_type?: string;
  /** A `cursor_position` action's answer. */
  cursor?: { x: number; y: number };
}

export interface DesktopWindow {
  id: string;
  title: string;
  pid: number | null;
  x: number;
  y: number;
  width: number;
  height: number;
  desktop: number;
}

/** A recording as the desktop service in the VM reports it. */
export interface VmRecording {
  id: string;
  status: 'recording' | 'ready' | 'failed';
  started_at: string;
  stopped_at: string | null;
  duration_seconds: number | null;
  size_bytes: number | null;
  framerate: number;
  width: number;
  height: number;
  error: string | null;
}

export interface ViewerUrl {
  session_id: string;
  viewer_url: string;
  websocket_url: string;
  view_only: boolean;
  expires_at: string;
}

/** A recording saved in the server's object store after it was stopped. */
export interface SavedRecording {
  recording_id: string;
  session_id: string;
  vm_id: string;
  status: 'saving' | 'ready' | 'failed';
  duration_seconds: number | null;
  size_bytes: number | null;
  width: number;
  height: number;
  error: string | null;
  started_at: string;
  stopped_at: string;
  saved_at: string | null;
  download_url: string | null;
}

export interface DesktopCreateOptions extends Omit<SessionCreateOptions, 'template' | 'snapshot' | 'vcpuCount' | 'memoryMb'> {
  /** 320 to 3840 (default 1280). */
  screenWidth?: number;
  /** 320 to 2160 (default 800). */
  screenHeight?: number;
}

export interface ScreenshotOptions extends CallOptions {
  /** 0.05 to 1: shrink the image by this factor. */
  scale?: number;
  /** Fit into this width and/or height (aspect kept when only one is given). */
  width?: number;
  height?: number;
}

export class ComputerUse {
  constructor(
    private readonly transport: Transport,
    private readonly sessions: Sessions,
  ) {}

  /** A new desktop session (template `desktop`); its VM starts now, in the background. */
  async create(options: DesktopCreateOptions = {}): Promise<Desktop> {
    const { screenWidth, screenHeight, ...session } = options;
    const info = await this.transport.call('/v1/sessions/session', 'post', {
      json: {
        template: 'desktop',
        prewarm: session.prewarm ?? true,
        ...(screenWidth !== undefined ? { screen_width: screenWidth } : {}),
        ...(screenHeight !== undefined ? { screen_height: screenHeight } : {}),
        ...lifetimeField(session),
        ...(session.metadata ? { metadata: session.metadata } : {}),
        ...(session.env ? { env: session.env } : {}),
      },
      signal: session.signal,
    });
    return new Desktop(this, info.session_id);
  }

  /** A Desktop object for an existing desktop session (no request is made). */
  connect(sessionId: string): Desktop {
    return new Desktop(this, sessionId);
  }

  /** The session itself (execute, files, kill…): a desktop session is a session. */
  session(sessionId: string) {
    return this.sessions.connect(sessionId);
  }

  private path(sessionId: string, rest: string): string {
    return `/v1/computeruse/${encodeURIComponent(sessionId)}/${rest}`;
  }

  /** Any request to the in-VM computer-use API (JSON answer). */
  async request<T = unknown>(
    sessionId: string,
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    rest: string,
    json?: unknown,
    options: CallOptions = {},
  ): Promise<T> {
    return (await this.transport.request(method, this.path(sessionId, rest), {
      kind: 'session',
      ...(json !== undefined ? { json } : {}),
      idempotent: method === 'GET',
      signal: options.signal,
    })) as T;
  }

  /** Runs one action as Anthropic's computer-use tool describes it. */
  action(sessionId: string, input: ComputerAction, options: CallOptions = {}): Promise<ComputerActionResult> {
    return this.request(sessionId, 'POST', 'action', input, options);
  }

  /** The screen as PNG bytes. */
  async screenshot(sessionId: string, options: ScreenshotOptions = {}): Promise<Uint8Array> {
    const { signal, ...query } = options;
    return (await this.transport.request('GET', this.path(sessionId, 'screenshot'), { kind: 'session', query, signal }, 'bytes')) as Uint8Array;
  }

  async viewerUrl(sessionId: string, options: { viewOnly?: boolean } & CallOptions = {}): Promise<ViewerUrl> {
    return this.transport.call('/v1/computeruse/{session_id}/viewer-url', 'get', {
      params: { session_id: sessionId },
      query: { view_only: options.viewOnly ?? false },
      kind: 'session',
      signal: options.signal,
    });
  }

  /** Saved recordings of the session, newest first. */
  async recordings(sessionId: string, options: CallOptions = {}): Promise<SavedRecording[]> {
    return (
      await this.transport.call('/v1/sessions/{session_id}/recordings', 'get', { params: { session_id: sessionId }, kind: 'session', signal: options.signal })
    ).recordings as SavedRecording[];
  }

  async recording(sessionId: string, recordingId: string, options: CallOptions = {}): Promise<SavedRecording> {
    return (await this.transport.call('/v1/sessions/{session_id}/recordings/{recording_id}', 'get', {
      params: { session_id: sessionId, recording_id: recordingId },
      kind: 'session',
      signal: options.signal,
    })) as SavedRecording;
  }

  /** A saved recording's MP4 bytes. */
  async downloadRecording(sessionId: string, recordingId: string, options: CallOptions = {}): Promise<Uint8Array> {
    const path = `/v1/sessions/${encodeURIComponent(sessionId)}/recordings/${encodeURIComponent(recordingId)}/download`;
    return (await this.transport.request('GET', path, { kind: 'session', headers: { accept: 'video/mp4' }, signal: options.signal }, 'bytes')) as Uint8Array;
  }

  async deleteRecording(sessionId: string, recordingId: string, options: CallOptions = {}): Promise<SavedRecording> {
    return (await this.transport.call('/v1/sessions/{session_id}/recordings/{recording_id}', 'delete', {
      params: { session_id: sessionId, recording_id: recordingId },
      kind: 'session',
      signal: options.signal,
    })) as SavedRecording;
  }

  /**
   * Waits until a stopped recording is saved (or failed), polling every `intervalMs` (default 500) for at most
   * `timeoutMs` (default 120000). Aborting `signal` stops the polling and rejects with its reason.
   */
  async waitForRecording(
    sessionId: string,
    recordingId: string,
    options: { timeoutMs?: number; intervalMs?: number } & CallOptions = {},
  ): Promise<SavedRecording> {
    const { signal } = options;
    const deadline = Date.now() + (options.timeoutMs ?? 120_000);
    for (;;) {
      const saved = await this.recordings(sessionId, { signal }).then((all) => all.find((r) => r.recording_id === recordingId));
      if (saved && saved.status !== 'saving') return saved;
      if (Date.now() > deadline) throw new Error(`recording ${recordingId} was not saved within ${options.timeoutMs ?? 120_000} ms`);
      await sleep(options.intervalMs ?? 500, signal);
    }
  }
}

/** One desktop session's actions, bound to its id. Each method takes `{ signal }` last (see `CallOptions`). */
export class Desktop {
  constructor(
    private readonly computerUse: ComputerUse,
    readonly sessionId: string,
  ) {}

  action(input: ComputerAction, options: CallOptions = {}): Promise<ComputerActionResult> {
    return this.computerUse.action(this.sessionId, input, options);
  }

  screenshot(options: ScreenshotOptions = {}): Promise<Uint8Array> {
    return this.computerUse.screenshot(this.sessionId, options);
  }

  moveMouse(x: number, y: number, options: CallOptions = {}) {
    return this.action({ action: 'mouse_move', coordinate: [x, y] }, options);
  }

  /** A click at (x, y) (or where the pointer is): left by default, `count` 2 or 3 for double and triple clicks. */
  click(x?: number, y?: number, options: { button?: 'left' | 'right' | 'middle'; count?: 1 | 2 | 3; modifiers?: string } & CallOptions = {}) {
    const count = options.count ?? 1;
    const action =
      options.button === 'right'
        ? 'right_click'
        : options.button === 'middle'
          ? 'middle_click'
          : count === 3
            ? 'triple_click'
            : count === 2
              ? 'double_click'
              : 'left_click';
    return this.action(
      {
        action,
        ...(x !== undefined && y !== undefined ? { coordinate: [x, y] } : {}),
        ...(options.modifiers ? { text: options.modifiers } : {}),
      },
      options,
    );
  }

  drag(from: [number, number], to: [number, number], options: CallOptions = {}) {
    return this.action({ action: 'left_click_drag', start_coordinate: from, coordinate: to }, options);
  }

  mouseDown(x?: number, y?: number, options: CallOptions = {}) {
    return this.action({ action: 'left_mouse_down', ...(x !== undefined && y !== undefined ? { coordinate: [x, y] } : {}) }, options);
  }

  mouseUp(x?: number, y?: number, options: CallOptions = {}) {
    return this.action({ action: 'left_mouse_up', ...(x !== undefined && y !== undefined ? { coordinate: [x, y] } : {}) }, options);
  }

  scroll(direction: 'up' | 'down' | 'left' | 'right', amount = 3, at?: [number, number], options: CallOptions = {}) {
    return this.action({ action: 'scroll', scroll_direction: direction, scroll_amount: amount, ...(at ? { coordinate: at } : {}) }, options);
  }

  /** Types text as key presses (`\n` presses Return). */
  type(text: string, options: CallOptions = {}) {
    return this.action({ action: 'type', text }, options);
  }

  /** Presses keys: X keysym names, combinations like `ctrl+s`, several separated by spaces. */
  key(keys: string, options: CallOptions = {}) {
    return this.action({ action: 'key', text: keys }, options);
  }

  holdKey(keys: string, seconds: number, options: CallOptions = {}) {
    return this.action({ action: 'hold_key', text: keys, duration: seconds }, options);
  }

  async cursorPosition(options: CallOptions = {}): Promise<{ x: number; y: number }> {
    return (await this.action({ action: 'cursor_position' }, options)).cursor!;
  }

  wait(seconds: number, options: CallOptions = {}) {
    return this.action({ action: 'wait', duration: seconds }, options);
  }

  display(options: CallOptions = {}): Promise<{ width: number; height: number }> {
    return this.computerUse.request(this.sessionId, 'GET', 'display', undefined, options);
  }

  resize(width: number, height: number, options: CallOptions = {}): Promise<{ width: number; height: number }> {
    return this.computerUse.request(this.sessionId, 'PUT', 'display', { width, height }, options);
  }

  async windows(options: CallOptions = {}): Promise<DesktopWindow[]> {
    return (await this.computerUse.request<{ windows: DesktopWindow[] }>(this.sessionId, 'GET', 'windows', undefined, options)).windows;
  }

  viewerUrl(options: { viewOnly?: boolean } & CallOptions = {}): Promise<ViewerUrl> {
    return this.computerUse.viewerUrl(this.sessionId, options);
  }

  startRecording(options: { framerate?: number } & CallOptions = {}): Promise<VmRecording> {
    return this.computerUse.request(
      this.sessionId,
      'POST',
      'recording/start',
      options.framerate !== undefined ? { framerate: options.framerate } : {},
      options,
    );
  }

  /** Stops the recording; the server then saves it (see `recordings()`, `waitForRecording()`). */
  stopRecording(options: CallOptions = {}): Promise<VmRecording> {
    return this.computerUse.request(this.sessionId, 'POST', 'recording/stop', undefined, options);
  }

  recordings(options: CallOptions = {}): Promise<SavedRecording[]> {
    return this.computerUse.recordings(this.sessionId, options);
  }

  waitForRecording(recordingId: string, options: { timeoutMs?: number; intervalMs?: number } & CallOptions = {}): Promise<SavedRecording> {
    return this.computerUse.waitForRecording(this.sessionId, recordingId, options);
  }

  downloadRecording(recordingId: string, options: CallOptions = {}): Promise<Uint8Array> {
    return this.computerUse.downloadRecording(this.sessionId, recordingId, options);
  }
}
