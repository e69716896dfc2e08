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
import type { CustomDomainHosts } from './custom-domain-hosts.ts';
import { deleteDomainsServing } from './custom-domain-events.ts';
import { recordEvent, type EventNotifier } from './events.ts';
import { newShareId } from './ids.ts';
import type { SessionService } from './sessions.ts';
import type { Share } from '../model.ts';
import type { Database } from '../store/database.ts';
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

/** A share with its addresses. For a private share, `url` and `directUrl` carry a freshly signed link. */
export interface ShareView {
  share: Share;
  url: string;
  /** Null while the session has no VM (the host name contains the VM id). */
  directUrl: string | null;
  /** When a private share's link (and the cookie it sets) stops working; null for public shares. */
  linkExpiresAt: string | null;
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
    /** The routing set of verified custom domains, which the domains of a deleted share leave at once. */
    private readonly domainHosts: CustomDomainHosts,
  ) {}

  async create(principal: Principal, spec: ShareSpec): Promise<ShareView> {
    const session = await this.sessions.getOwned(principal, spec.sessionId);
    const now = this.clock.now();
    const created = await this.database.db.transaction().execute(async (trx) => {
      const share = await insertShare(trx, {
        id: newShareId(),
        userId: principal.userId,
        sessionId: session.id,
        port: spec.port,
        isPublic: spec.isPublic,
        createdAt: now.toISOString(),
        expiresAt: spec.expiresInSeconds === null ? null : new Date(now.getTime() + spec.expiresInSeconds * 1000).toISOString(),
      });
      await recordEvent(trx, this.clock, {
        type: 'share.created',
        userId: principal.userId,
        subjectId: share.id,
        data: { share_id: share.id, session_id: share.sessionId, port: share.port, is_public: share.isPublic, expires_at: share.expiresAt },
      });
      return share;
    });
    this.notifier.committed();
    return this.view(created);
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
    const share = await this.getOwned(principal, shareId);
    const view = await this.view(share, { withLink: false });
    const deleted = await this.database.db.transaction().execute(async (trx) => {
      // Custom domains served like this share go with it (never left routing to something else).
      const domains = await deleteDomainsServing(trx, this.clock, { shareId: share.id });
      // Deleted meanwhile (another request): the throw rolls the domains' deletion back with it.
      if (!(await deleteShare(trx, share.id))) throw notFound(`share ${shareId}`);
      await recordEvent(trx, this.clock, {
        type: 'share.revoked',
        userId: principal.userId,
        subjectId: share.id,
        data: { share_id: share.id, session_id: share.sessionId, port: share.port },
      });
      return domains;
    });
    for (const domain of deleted) if (domain.status === 'verified') this.domainHosts.remove(domain.domain);
    this.notifier.committed();
    return view;
  }

  /** A share that still grants access at this moment (exists, not expired), or undefined. */
  async findValid(shareId: string): Promise<Share | undefined> {
    const share = await findShare(this.database.db, shareId);
    if (!share || (share.expiresAt !== null && Date.parse(share.expiresAt) <= this.clock.now().getTime())) return undefined;
    return share;
  }

  /** When a link or cookie of this share, signed now, stops working. */
  linkExpiry(share: Share): Date {
    const ttl = new Date(this.clock.now().getTime() + this.linkTtlSeconds * 1000);
    return share.expiresAt !== null && Date.parse(share.expiresAt) < ttl.getTime() ? new Date(share.expiresAt) : ttl;
  }

  /** The caller's share; 404 for unknown ids and for other users' shares alike. */
  async getOwned(principal: Principal, shareId: string): Promise<Share> {
    const share = await findShare(this.database.db, shareId);
    if (!share || share.userId !== principal.userId) throw notFound(`share ${shareId}`);
    return share;
  }

  private async view(share: Share, { withLink = true } = {}): Promise<ShareView> {
    const session = await this.sessions.find(share.sessionId);
    const vmId = session?.currentVmId ?? null;
    let url = this.urls.pathUrl(share.sessionId, share.port);
    let directUrl = vmId ? this.urls.directUrl(vmId, share.port) : null;
    let linkExpiresAt: string | null = null;
    if (!share.isPublic && withLink) {
      const expiry = this.linkExpiry(share);
      const token = await this.tokens.sign('link', share.id, expiry);
      url = `${url}?${SHARE_TOKEN_PARAM}=${token}`;
      if (directUrl) directUrl = `${directUrl}?${SHARE_TOKEN_PARAM}=${token}`;
      linkExpiresAt = expiry.toISOString();
    }
    return { share, url, directUrl, linkExpiresAt };
  }
}
