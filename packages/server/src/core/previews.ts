/**
 * Who may open a preview (a VM port through the preview proxy), and the connection to it. A request is let
 * in by, in this order: a link token (a private share's link, or a desktop viewer link), the owner's
 * credentials (API key or bearer token), a public share of that port, the cookie a link set. Everyone else
 * gets 401, or 404 when their credentials name another user (the session's existence does not leak).
 * The owner comes before a public share so that an owner's request is the owner's (attributed, and never
 * mistaken for an anonymous one); a credential that does not open the preview still passes a public share,
 * which is open to anyone. Whatever the grant, no credential reaches the VM (api/preview/preview-request.ts).
 */
import type { Duplex } from 'node:stream';
import { type Authenticator, type CredentialSource, notAuthenticated, type Principal } from './authenticator.ts';
import { looksLikeSandboxdCredential } from './auth/credential-shape.ts';
import type { PreviewTokens } from './auth/preview-tokens.ts';
import type { Clock } from './clock.ts';
import { AppError, notFound } from './errors.ts';
import { isUuid } from './ids.ts';
import type { SessionService } from './sessions.ts';
import type { ShareService } from './shares.ts';
import { resumesOnTraffic, type VmService } from './vms/index.ts';
import type { Database } from '../store/database.ts';
import { DESKTOP_TEMPLATE_ID, type Session, type Share, type Vm } from '../model.ts';
import { DESKTOP_PORTS } from './computer-use/desktop.ts';
import type { ViewerGrant, ViewerTokens } from './computer-use/viewer-tokens.ts';
import { findPublicShares } from '../store/shares-store.ts';
import { findVm } from '../store/vms-store.ts';

/** Name of the HttpOnly cookie a private share link sets (scoped to the one preview). */
export const PREVIEW_COOKIE = 'sandboxd_preview';

/**
 * A preview named by the API path (`/v1/app/{session_id}/{port}/…`), by host name (`{vm_id}-{port}.<domain>`),
 * or by a verified custom domain (resolved to its session and port by `CustomDomainService.targetOf`).
 */
export type PreviewTarget =
  | { kind: 'path'; sessionId: string; port: number }
  | { kind: 'host'; vmId: string; port: number }
  | { kind: 'domain'; domain: string; sessionId: string; port: number };

/** The credentials a preview request carries. */
export interface PreviewCredentials {
  /** From `X-API-Key` or `Authorization: Bearer`. */
  credential: { value: string; source: CredentialSource } | null;
  /** The value of the {@link PREVIEW_COOKIE} cookie. */
  cookieToken: string | null;
  /** The `sandboxd_token` query parameter of a private share link. */
  linkToken: string | null;
}

/** Why a request was let in. */
export type PreviewGrant = {
  session: Session;
  vm: Vm | undefined;
  port: number;
} & (
  | { via: 'owner'; principal: Principal }
  | { via: 'public_share' | 'share_cookie' | 'share_link'; share: Share }
  /** A desktop viewer URL's page token (`fromLink`) or the cookie it was exchanged for: the noVNC page only. */
  | { via: 'viewer'; viewer: ViewerGrant; fromLink: boolean }
);

export class PreviewAccess {
  constructor(
    private readonly database: Database,
    private readonly sessions: SessionService,
    private readonly vms: VmService,
    private readonly shares: ShareService,
    private readonly tokens: PreviewTokens,
    private readonly authenticator: Authenticator,
    private readonly clock: Clock,
    private readonly viewerTokens: ViewerTokens,
  ) {}

  async authorize(target: PreviewTarget, credentials: PreviewCredentials): Promise<PreviewGrant> {
    const located = await this.locate(target);
    const matches = (share: Share | undefined): share is Share =>
      share !== undefined && located !== null && share.sessionId === located.session.id && share.port === target.port;

    if (credentials.linkToken) {
      const viewer = await this.viewerGrant('page', credentials.linkToken, target, located);
      if (viewer) return { ...located!, port: target.port, via: 'viewer', viewer, fromLink: true };
      const shareId = await this.tokens.verify('link', credentials.linkToken);
      const share = shareId ? await this.shares.findValid(shareId) : undefined;
      if (!matches(share)) throw new AppError('FORBIDDEN', 'This preview link is invalid, has expired, or its share was revoked: ask the owner for a new link');
      return { ...located!, port: target.port, via: 'share_link', share };
    }
    const [publicShare] = located ? await findPublicShares(this.database.db, located.session.id, target.port, this.clock.now().toISOString()) : [];
    // An app's own bearer token on a public port is not ours to check; one of sandboxd's shape is (the owner's).
    if (credentials.credential && (!publicShare || looksLikeSandboxdCredential(credentials.credential.value))) {
      const owner = await this.owner(target, located, credentials.credential, publicShare !== undefined);
      if (owner) return { ...located!, port: target.port, via: 'owner', principal: owner };
    }
    if (publicShare) return { ...located!, port: target.port, via: 'public_share', share: publicShare };
    if (credentials.cookieToken) {
      const shareId = await this.tokens.verify('cookie', credentials.cookieToken);
      const share = shareId ? await this.shares.findValid(shareId) : undefined;
      if (matches(share)) return { ...located!, port: target.port, via: 'share_cookie', share };
      const viewer = shareId ? null : await this.viewerGrant('page_cookie', credentials.cookieToken, target, located);
      if (viewer) return { ...located!, port: target.port, via: 'viewer', viewer, fromLink: false };
      throw new AppError(
        'FORBIDDEN',
        'Your preview cookie does not open this preview: it expired, its share was revoked, or it belongs to another preview. Ask the owner for a new link',
      );
    }
    throw notAuthenticated();
  }

  /**
   * The principal of a credential that opens this preview (its session's owner). When it does not:
   * null if the port is public anyway (`fallback`), else 401 for a bad credential and 404 for another user's.
   */
  private async owner(
    target: PreviewTarget,
    located: { session: Session } | null,
    credential: { value: string; source: CredentialSource },
    fallback: boolean,
  ): Promise<Principal | null> {
    let principal: Principal;
    try {
      principal = await this.authenticator.authenticate(credential.value, credential.source);
    } catch (error) {
      if (fallback && error instanceof AppError && error.statusCode === 401) return null;
      throw error;
    }
    if (located && located.session.userId === principal.userId) return principal;
    if (fallback) return null;
    throw notFound(target.kind === 'path' ? `session ${target.sessionId}` : target.kind === 'host' ? `VM ${target.vmId}` : `custom domain ${target.domain}`);
  }

  /** A TCP connection to the granted port inside the session's VM; 404 without a VM, 410 when it ended. */
  async connect(grant: PreviewGrant): Promise<Duplex> {
    const { vm } = grant;
    if (!vm) throw new AppError('NOT_FOUND', `session ${grant.session.id} has no VM yet: run code or POST /v1/vms first`);
    if (vm.status === 'paused' && resumesOnTraffic(vm)) {
      // Auto-resume: the first request waits for the VM (its answer says so: Sandboxd-Resumed), on the owner's quota.
      const owner = grant.via === 'owner' ? grant.principal : await this.authenticator.principalOfSessionOwner(grant.session);
      const live = await this.vms.ensureVm(owner, grant.session);
      return live.agent.openTunnel(grant.port);
    }
    if (vm.status !== 'active')
      throw new AppError('VM_GONE', `VM ${vm.id} of this preview is ${vm.status === 'starting' ? 'still starting' : `no longer running (${vm.status})`}`);
    const agent = this.vms.agentOf(vm);
    if (!agent) throw new AppError('VM_GONE', `VM ${vm.id} of this preview is no longer running`);
    return agent.openTunnel(grant.port);
  }

  /** The cookie a share link sets: its value and when it stops working. */
  async cookieFor(share: Share): Promise<{ value: string; expiresAt: Date }> {
    const expiresAt = this.shares.linkExpiry(share);
    return { value: await this.tokens.sign('cookie', share.id, expiresAt), expiresAt };
  }

  /** The cookie a viewer page token is exchanged for: as long-lived as the token. */
  async viewerCookieFor(viewer: ViewerGrant): Promise<{ value: string; expiresAt: Date }> {
    return { value: await this.viewerTokens.sign('page_cookie', viewer), expiresAt: viewer.expiresAt };
  }

  /**
   * A viewer token's grant when it opens this very preview: the viewer port of the desktop session it names,
   * by path. Null when the token is not a viewer token; FORBIDDEN when it is one for something else.
   */
  private async viewerGrant(
    kind: 'page' | 'page_cookie',
    token: string,
    target: PreviewTarget,
    located: { session: Session; vm: Vm | undefined } | null,
  ): Promise<ViewerGrant | null> {
    const viewer = await this.viewerTokens.verify(kind, token);
    if (!viewer) return null;
    const opens =
      located !== null &&
      target.kind === 'path' &&
      target.port === DESKTOP_PORTS.viewer &&
      viewer.sessionId === located.session.id &&
      located.session.source.kind === 'template' &&
      located.session.source.id === DESKTOP_TEMPLATE_ID;
    if (!opens)
      throw new AppError(
        'FORBIDDEN',
        'This viewer link opens another desktop: get a viewer URL for this session (GET /v1/computeruse/{session_id}/viewer-url)',
      );
    return viewer;
  }

  private async locate(target: PreviewTarget): Promise<{ session: Session; vm: Vm | undefined } | null> {
    if (target.kind === 'path' || target.kind === 'domain') {
      if (!isUuid(target.sessionId)) return null;
      const session = await this.sessions.find(target.sessionId);
      return session ? { session, vm: await this.sessions.currentVm(session) } : null;
    }
    const vm = await findVm(this.database.db, target.vmId);
    const session = vm?.sessionId ? await this.sessions.find(vm.sessionId) : undefined;
    return vm && session ? { session, vm } : null;
  }
}
