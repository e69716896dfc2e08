/**
 * Shares: the owner of a session makes one of its VM ports reachable by others through the preview proxy.
 * A public share opens the port to anyone; a private one hands out signed, expiring links (see
 * `auth/preview-tokens.ts`). Deleting a share revokes it at once: the proxy reads the share on every request.
 */
import type { Principal } from './authenticator.ts';
import type { AppUrls } from './app-urls.ts';
import type { PreviewTokens } from './auth/preview-tokens.ts';
import type { Clock } from './clock.ts';
import { notFound } from './errors.ts';
import { recordEvent, type EventNotifier } from './events.ts';
import { newShareId } from './ids.ts';
import type { SessionService } from './sessions.ts';
import type { Database } from '../store/database.ts';
import type { ShareRow } from '../store/schema.ts';
import { deleteShare, findShare, insertShare, listShares } from '../store/shares-store.ts';

/** Query parameter of a private share link. */
export const SHARE_TOKEN_PARAM = 'sandboxd_token';

export interface ShareSpec {
  sessionId: string;
  port: number;
  isPublic: boolean;
  /** Null: until deleted. */
  expiresInSeconds: number | null;
}

/** A share as the API shows it. For a private share, `url` and `direct_url` carry a freshly signed link. */
export interface ShareView {
  share_id: string;
  session_id: string;
  port: number;
  is_public: boolean;
  url: string;
  /** Null while the session has no VM (the host name contains the VM id). */
  direct_url: string | null;
  /** When a private share's link (and the cookie it sets) stops working; null for public shares. */
  link_expires_at: string | null;
  expires_at: string | null;
  created_at: string;
}

export class ShareService {
  constructor(
    private readonly database: Database,
    private readonly sessions: SessionService,
    private readonly tokens: PreviewTokens,
    private readonly urls: AppUrls,
    private readonly clock: Clock,
    private readonly notifier: EventNotifier,
    private readonly linkTtlSeconds: number,
  ) {}

  async create(principal: Principal, spec: ShareSpec): Promise<ShareView> {
    const session = await this.sessions.getOwned(principal, spec.sessionId);
    const now = this.clock.now();
    const row = await this.database.db.transaction().execute(async (trx) => {
      const share = await insertShare(trx, {
        id: newShareId(),
        user_id: principal.userId,
        session_id: session.id,
        port: spec.port,
        is_public: spec.isPublic ? 1 : 0,
        created_at: now.toISOString(),
        expires_at: spec.expiresInSeconds === null ? null : new Date(now.getTime() + spec.expiresInSeconds * 1000).toISOString(),
      });
      await recordEvent(trx, this.clock, {
        type: 'share.created',
        userId: principal.userId,
        subjectId: share.id,
        data: { share_id: share.id, session_id: share.session_id, port: share.port, is_public: spec.isPublic, expires_at: share.expires_at },
      });
      return share;
    });
    this.notifier.committed();
    return this.view(row);
  }

  async list(principal: Principal, sessionId?: string): Promise<ShareView[]> {
    if (sessionId !== undefined) await this.sessions.getOwned(principal, sessionId);
    const rows = await listShares(this.database.db, principal.userId, sessionId);
    return Promise.all(rows.map((row) => this.view(row)));
  }

  async get(principal: Principal, shareId: string): Promise<ShareView> {
    return this.view(await this.getOwned(principal, shareId));
  }

  /** Revokes a share: links and cookies it handed out stop working with the next request. */
  async delete(principal: Principal, shareId: string): Promise<ShareView> {
    const row = await this.getOwned(principal, shareId);
    const view = await this.view(row, { withLink: false });
    const deleted = await this.database.db.transaction().execute(async (trx) => {
      if (!(await deleteShare(trx, row.id))) return false;
      await recordEvent(trx, this.clock, {
        type: 'share.revoked',
        userId: principal.userId,
        subjectId: row.id,
        data: { share_id: row.id, session_id: row.session_id, port: row.port },
      });
      return true;
    });
    if (!deleted) throw notFound(`share ${shareId}`);
    this.notifier.committed();
    return view;
  }

  /** A share that still grants access at this moment (exists, not expired), or undefined. */
  async findValid(shareId: string): Promise<ShareRow | undefined> {
    const row = await findShare(this.database.db, shareId);
    if (!row || (row.expires_at !== null && Date.parse(row.expires_at) <= this.clock.now().getTime())) return undefined;
    return row;
  }

  /** When a link or cookie of this share, signed now, stops working. */
  linkExpiry(row: ShareRow): Date {
    const ttl = new Date(this.clock.now().getTime() + this.linkTtlSeconds * 1000);
    return row.expires_at !== null && Date.parse(row.expires_at) < ttl.getTime() ? new Date(row.expires_at) : ttl;
  }

  private async getOwned(principal: Principal, shareId: string): Promise<ShareRow> {
    const row = await findShare(this.database.db, shareId);
    if (!row || row.user_id !== principal.userId) throw notFound(`share ${shareId}`);
    return row;
  }

  private async view(row: ShareRow, { withLink = true } = {}): Promise<ShareView> {
    const session = await this.sessions.find(row.session_id);
    const vmId = session?.currentVmId ?? null;
    let url = this.urls.pathUrl(row.session_id, row.port);
    let directUrl = vmId ? this.urls.directUrl(vmId, row.port) : null;
    let linkExpiresAt: string | null = null;
    if (!row.is_public && withLink) {
      const expiry = this.linkExpiry(row);
      const token = await this.tokens.sign('link', row.id, expiry);
      url = `${url}?${SHARE_TOKEN_PARAM}=${token}`;
      if (directUrl) directUrl = `${directUrl}?${SHARE_TOKEN_PARAM}=${token}`;
      linkExpiresAt = expiry.toISOString();
    }
    return {
      share_id: row.id,
      session_id: row.session_id,
      port: row.port,
      is_public: row.is_public === 1,
      url,
      direct_url: directUrl,
      link_expires_at: linkExpiresAt,
      expires_at: row.expires_at,
      created_at: row.created_at,
    };
  }
}
