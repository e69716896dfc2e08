/**
 * Computer use: sessions started from the built-in `desktop` template, reached through
 * - the authenticated reverse proxy to the desktop service in their VM (`/v1/computeruse/{session_id}/{path}`),
 * - the viewer: a short-lived URL of sandboxd's own noVNC page (api/preview/desktop-viewer-page.ts; nothing
 *   of the VM's is served to it) and a WebSocket the server relays to the VM's VNC server itself, view-only
 *   or interactive,
 * - recordings: stopped through the proxy, then saved into the object store in the background.
 * Every entry point checks that the session is the caller's (404 otherwise, never a hint that it exists).
 */
import type { IncomingMessage } from 'node:http';
import type { DesktopRecording } from '@sandboxd/agent/protocol';
import type { Duplex } from 'node:stream';
import type { Principal } from '../authenticator.ts';
import type { Clock } from '../clock.ts';
import { AppError, notFound } from '../errors.ts';
import { recordEvent, type EventNotifier } from '../events.ts';
import { isUuid } from '../ids.ts';
import { DESKTOP_TEMPLATE_ID, type Session } from '../../model.ts';
import type { SessionService } from '../sessions.ts';
import { VmSources } from '../vm-sources.ts';
import type { VmEngine } from '../vm-engine.ts';
import type { LiveVm, VmService } from '../vms/index.ts';
import type { Database } from '../../store/database.ts';
import {
  deleteDesktopRecording,
  failUnsavedDesktopRecordings,
  findDesktopRecording,
  insertDesktopRecording,
  listDesktopRecordings,
  updateDesktopRecording,
  type DesktopRecordingRow,
} from '../../store/desktop-recordings-store.ts';
import type { ObjectStore } from '../../storage/object-store.ts';
import { DESKTOP_DEFAULT_SCREEN, DESKTOP_PORTS } from './desktop.ts';
import { guestJson, guestRequest } from './guest-http.ts';
import type { ViewerGrant, ViewerTokens } from './viewer-tokens.ts';
import type { StoredRecording } from '../../activity.ts';

/** A recording as the desktop service reports it (`POST /recording/stop`). */
export type GuestRecording = DesktopRecording;

export interface ComputerUseOptions {
  /** How long a viewer URL (and its WebSocket token) works, seconds. */
  viewerTokenTtlSeconds: number;
  /** Largest recording saved to the object store, bytes. */
  maxRecordingBytes: number;
  /** Restored desktop VMs kept ready (0: none), in the shape of every desktop VM. */
  poolSize: number;
  shape: { vcpuCount: number; memoryMb: number };
}

/** Where the viewer lives, for the API to turn into absolute URLs. */
export interface ViewerLinks {
  pageToken: string;
  vncToken: string;
  expiresAt: Date;
  viewOnly: boolean;
}

const RECORDING_ID = /^rec_[0-9a-f]{16}$/;

/**
 * The `desktopScreen` ready step of a new VM (core/vms/readiness.ts): a desktop session that asked for another
 * screen size gets it before its VM is handed to anyone.
 */
export async function fitDesktopScreen(session: Session, live: LiveVm): Promise<void> {
  if (!VmSources.isBuiltin(session.source, DESKTOP_TEMPLATE_ID) || !session.screen) return;
  if (session.screen.width === DESKTOP_DEFAULT_SCREEN.width && session.screen.height === DESKTOP_DEFAULT_SCREEN.height) return;
  await guestJson(live.agent, DESKTOP_PORTS.api, { method: 'PUT', path: '/display', json: session.screen });
}

export class ComputerUseService {
  /** Saves under way (tests and shutdown wait for them). */
  private readonly saving = new Set<Promise<void>>();

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly notifier: EventNotifier,
    private readonly sessions: SessionService,
    private readonly vms: VmService,
    private readonly tokens: ViewerTokens,
    private readonly objects: ObjectStore,
    private readonly engine: VmEngine,
    private readonly sources: VmSources,
    private readonly options: ComputerUseOptions,
  ) {}

  /**
   * Marks recordings a previous process was saving as failed (their transfer died with it), and starts the
   * desktop warm pool when one is configured (its image is built first if needed, in the background).
   */
  async recover(log: { warn(object: unknown, message: string): void }): Promise<void> {
    await failUnsavedDesktopRecordings(this.database.db, 'the server stopped while the recording was being saved');
    if (this.options.poolSize > 0) {
      this.sources.builtinImage(DESKTOP_TEMPLATE_ID).then(
        (template) => this.engine.keepWarm({ template, ...this.options.shape, size: this.options.poolSize }),
        (error: unknown) => log.warn({ err: error }, 'the desktop warm pool could not start: its image is not available'),
      );
    }
  }

  /** Resolves when every save started so far has ended. */
  async settled(): Promise<void> {
    while (this.saving.size > 0) await Promise.allSettled([...this.saving]);
  }

  /** The caller's desktop session (404 for anyone else's, 409 for a session that is not a desktop). */
  async desktopSession(principal: Principal, sessionId: string): Promise<Session> {
    if (!isUuid(sessionId)) throw notFound(`session ${sessionId}`);
    const session = await this.sessions.getOwned(principal, sessionId);
    if (!VmSources.isBuiltin(session.source, DESKTOP_TEMPLATE_ID)) {
      throw new AppError(
        'CONFLICT',
        `session ${sessionId} is not a desktop session: create one with {"template": "${DESKTOP_TEMPLATE_ID}"} to use computer use`,
      );
    }
    return session;
  }

  /** The desktop session's VM, started if it has none yet (as a first execute would). */
  async desktopVm(principal: Principal, sessionId: string): Promise<{ session: Session; live: LiveVm }> {
    const session = await this.desktopSession(principal, sessionId);
    const live = await this.vms.ensureVm(principal, session);
    await this.sessions.touch(session.id);
    return { session, live };
  }

  /** A connection to the desktop service's API in the session's VM. */
  async openApi(principal: Principal, sessionId: string): Promise<{ session: Session; live: LiveVm; tunnel: Duplex }> {
    const { session, live } = await this.desktopVm(principal, sessionId);
    return { session, live, tunnel: await live.agent.openTunnel(DESKTOP_PORTS.api) };
  }

  /** Tokens for the viewer page and its WebSocket, valid for the configured time; the desktop is started if needed. */
  async viewer(principal: Principal, sessionId: string, viewOnly: boolean): Promise<ViewerLinks> {
    const { session, live } = await this.desktopVm(principal, sessionId);
    const expiresAt = new Date(this.clock.now().getTime() + this.options.viewerTokenTtlSeconds * 1000);
    const grant: ViewerGrant = { sessionId: session.id, viewOnly, expiresAt };
    const [pageToken, vncToken] = await Promise.all([this.tokens.sign('page', grant), this.tokens.sign('vnc', grant)]);
    await this.record(principal.userId, 'computer_use.viewer.created', session.id, {
      session_id: session.id,
      vm_id: live.vm.id,
      view_only: viewOnly,
      expires_at: expiresAt.toISOString(),
    });
    return { pageToken, vncToken, expiresAt, viewOnly };
  }

  /**
   * Authorizes a VNC WebSocket and connects it to the VM's VNC server: by a viewer URL's token (no API key
   * needed), or by the owner's own credentials (interactive). No credentials or a bad token: 401; a token for
   * another session, another user's credentials, or a session that is not a desktop: 404.
   */
  async connectVnc(
    sessionId: string,
    auth: { token: string | null; principal: Principal | null },
  ): Promise<{ grant: ViewerGrant; session: Session; live: LiveVm; tunnel: Duplex }> {
    let grant: ViewerGrant;
    if (auth.principal) {
      if (!isUuid(sessionId)) throw notFound(`session ${sessionId}`);
      const owned = await this.sessions.find(sessionId);
      if (!owned || owned.userId !== auth.principal.userId) throw notFound(`session ${sessionId}`);
      grant = { sessionId, viewOnly: false, expiresAt: this.clock.now() };
    } else {
      if (!auth.token)
        throw new AppError(
          'NOT_AUTHENTICATED',
          'this WebSocket needs the token of a viewer URL (GET /v1/computeruse/{session_id}/viewer-url) as ?token=…, or your API key',
        );
      const verified = await this.tokens.verify('vnc', auth.token);
      if (!verified) throw new AppError('NOT_AUTHENTICATED', 'the viewer token is invalid or has expired: get a new viewer URL');
      if (verified.sessionId !== sessionId) throw notFound(`session ${sessionId}`);
      grant = verified;
    }
    const session = await this.sessions.find(sessionId);
    if (!session || !VmSources.isBuiltin(session.source, DESKTOP_TEMPLATE_ID)) throw notFound(`session ${sessionId}`);
    const vm = await this.sessions.currentVm(session);
    const agent = vm ? this.vms.agentOf(vm) : null;
    if (!vm || !agent) throw new AppError('VM_GONE', `the desktop of session ${sessionId} is not running: get a viewer URL (which starts it)`);
    const tunnel = await agent.openTunnel(DESKTOP_PORTS.vnc);
    await this.sessions.touch(session.id);
    return { grant, session, live: { vm, agent }, tunnel };
  }

  /** Records that a viewer connected or left (`computer_use.viewer.connected` / `.disconnected`). */
  async viewerEvent(
    session: Session,
    vmId: string,
    type: 'computer_use.viewer.connected' | 'computer_use.viewer.disconnected',
    viewOnly: boolean,
  ): Promise<void> {
    await this.record(session.userId, type, session.id, { session_id: session.id, vm_id: vmId, view_only: viewOnly });
  }

  /**
   * After the proxy passed a successful `POST /recording/stop`: records the recording and saves its MP4 into the
   * object store in the background (`computer_use.recording.saved` or `.failed` tells when it is done).
   */
  async recordingStopped(principal: Principal, session: Session, live: LiveVm, recording: GuestRecording): Promise<void> {
    if (!RECORDING_ID.test(recording.id)) return;
    const now = this.clock.now().toISOString();
    const failed = recording.status !== 'ready';
    const row: DesktopRecordingRow = {
      id: recording.id,
      user_id: principal.userId,
      session_id: session.id,
      vm_id: live.vm.id,
      status: failed ? 'failed' : 'saving',
      duration_seconds: recording.duration_seconds,
      size_bytes: recording.size_bytes,
      width: recording.width,
      height: recording.height,
      object_key: null,
      error: failed ? (recording.error ?? 'the recording failed in the VM') : null,
      started_at: recording.started_at,
      stopped_at: recording.stopped_at ?? now,
      created_at: now,
      saved_at: null,
    };
    await this.database.db.transaction().execute(async (trx) => {
      await insertDesktopRecording(trx, row);
      await recordEvent(trx, this.clock, {
        type: 'computer_use.recording.stopped',
        userId: principal.userId,
        subjectId: session.id,
        data: { session_id: session.id, vm_id: live.vm.id, recording_id: row.id, duration_seconds: row.duration_seconds, size_bytes: row.size_bytes },
      });
    });
    this.notifier.committed();
    if (failed) return;
    const save = this.save(row, live).finally(() => this.saving.delete(save));
    this.saving.add(save);
  }

  private async save(row: DesktopRecordingRow, live: LiveVm): Promise<void> {
    const key = `recordings/${row.user_id}/${row.session_id}/${row.id}.mp4`;
    try {
      if ((row.size_bytes ?? 0) > this.options.maxRecordingBytes) {
        throw new Error(`the recording is ${row.size_bytes} bytes, more than the ${this.options.maxRecordingBytes} bytes this server stores`);
      }
      const response = await guestRequest(live.agent, DESKTOP_PORTS.api, { method: 'GET', path: `/recordings/${row.id}/download`, timeoutMs: 300_000 });
      const body = await readAll(response, this.options.maxRecordingBytes);
      if ((response.statusCode ?? 0) !== 200) throw new Error(`the desktop service answered ${response.statusCode}: ${body.toString('utf8').slice(0, 300)}`);
      await this.objects.put(key, body, { contentType: 'video/mp4' });
      const savedAt = this.clock.now().toISOString();
      await this.database.db.transaction().execute(async (trx) => {
        await updateDesktopRecording(trx, row.id, { status: 'ready', object_key: key, size_bytes: body.length, saved_at: savedAt });
        await recordEvent(trx, this.clock, {
          type: 'computer_use.recording.saved',
          userId: row.user_id,
          subjectId: row.session_id,
          data: { session_id: row.session_id, recording_id: row.id, size_bytes: body.length, duration_seconds: row.duration_seconds },
        });
      });
    } catch (error) {
      const message = (error as Error).message;
      await this.database.db.transaction().execute(async (trx) => {
        await updateDesktopRecording(trx, row.id, { status: 'failed', error: message });
        await recordEvent(trx, this.clock, {
          type: 'computer_use.recording.failed',
          userId: row.user_id,
          subjectId: row.session_id,
          data: { session_id: row.session_id, recording_id: row.id, error: message },
        });
      });
    }
    this.notifier.committed();
  }

  /** The session's saved recordings, newest first (the session must be the caller's; it may have ended). */
  async listRecordings(principal: Principal, sessionId: string, limit: number, offset: number): Promise<StoredRecording[]> {
    await this.ownedSession(principal, sessionId);
    return listDesktopRecordings(this.database.db, principal.userId, sessionId, limit, offset);
  }

  async getRecording(principal: Principal, sessionId: string, recordingId: string): Promise<StoredRecording> {
    await this.ownedSession(principal, sessionId);
    const recording = await findDesktopRecording(this.database.db, principal.userId, sessionId, recordingId);
    if (!recording) throw notFound(`recording ${recordingId}`);
    return recording;
  }

  /** The saved MP4 of a ready recording (409 while saving, or when it failed). */
  async downloadRecording(principal: Principal, sessionId: string, recordingId: string) {
    const recording = await this.getRecording(principal, sessionId, recordingId);
    if (recording.status !== 'ready' || !recording.objectKey) {
      throw new AppError(
        'CONFLICT',
        `recording ${recordingId} is ${recording.status}${recording.error ? `: ${recording.error}` : ''}; only a saved recording downloads`,
      );
    }
    const stored = await this.objects.getStream(recording.objectKey);
    if (!stored) throw new AppError('NOT_FOUND', `recording ${recordingId} is no longer in the object store`);
    return { recording, stored };
  }

  async deleteRecording(principal: Principal, sessionId: string, recordingId: string): Promise<StoredRecording> {
    const recording = await this.getRecording(principal, sessionId, recordingId);
    if (recording.status === 'saving') throw new AppError('CONFLICT', `recording ${recordingId} is still being saved: delete it once it is ready`);
    if (recording.objectKey) await this.objects.delete(recording.objectKey);
    await deleteDesktopRecording(this.database.db, recording.id);
    return recording;
  }

  private async ownedSession(principal: Principal, sessionId: string): Promise<Session> {
    if (!isUuid(sessionId)) throw notFound(`session ${sessionId}`);
    return this.sessions.getOwned(principal, sessionId);
  }

  private async record(
    userId: number,
    type: 'computer_use.viewer.created' | 'computer_use.viewer.connected' | 'computer_use.viewer.disconnected',
    sessionId: string,
    data: { session_id: string; vm_id: string; view_only: boolean; expires_at?: string },
  ): Promise<void> {
    await this.database.db.transaction().execute(async (trx) => {
      if (type === 'computer_use.viewer.created') {
        await recordEvent(trx, this.clock, { type, userId, subjectId: sessionId, data: { ...data, expires_at: data.expires_at! } });
      } else {
        await recordEvent(trx, this.clock, {
          type,
          userId,
          subjectId: sessionId,
          data: { session_id: data.session_id, vm_id: data.vm_id, view_only: data.view_only },
        });
      }
    });
    this.notifier.committed();
  }
}

/** The whole body, or an error past `max` bytes. */
async function readAll(response: IncomingMessage, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) {
      response.destroy();
      throw new Error(`the recording is larger than the ${max} bytes this server stores`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}
