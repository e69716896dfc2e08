/**
 * Custom domains: a user maps a domain of theirs to a share (served with the share's access rules), to a
 * session's port (served like a private preview: the owner, and whoever a share of that port lets in) or to a
 * deployed app (served like the app's own host: its live replicas, its public or private rule). The
 * claim is proven by a DNS TXT record `_sandboxd-challenge.<domain>` holding the claim's token, checked by
 * the verify operation and by the background checker (`custom-domain-checker.ts`) until the claim expires.
 *
 * Several accounts may claim one domain while pending (nobody has proven anything yet); the first claim to
 * be verified wins, and the other pending claims of that domain fail at once (`verified_elsewhere`). The
 * store's partial unique index makes that hold across nodes. A verified claim stays verified while its record
 * stays: the background checker looks it up again every `reverifySeconds`, and a claim whose record is missing
 * (or cannot be looked up) at `reverifyMisses` re-checks in a row fails (`record_missing`) and stops being
 * served, so whoever once controlled a domain's DNS (an expired domain, a dangling delegation) does not keep
 * it. A reverse proxy's "may I get a certificate" question (`isVerified`, tls-check) asks DNS again too.
 * Deleting its share or app deletes it too (`custom-domain-events.ts`).
 */
import type { AuditActor } from './audit.ts';
import { recordAudit } from './audit.ts';
import type { Principal } from './authenticator.ts';
import type { AppUrls } from './app-urls.ts';
import type { PreviewTokens } from './auth/preview-tokens.ts';
import type { Clock } from './clock.ts';
import { challengeName, domainProblem, normalizeDomain, type ReservedNames } from './custom-domain-names.ts';
import { recordDeletion, recordFailure } from './custom-domain-events.ts';
import type { CustomDomainHosts } from './custom-domain-hosts.ts';
import { checkChallenge, newVerificationToken, type TxtResolver } from './custom-domain-verification.ts';
import { AppError, conflict, InputError, notFound } from './errors.ts';
import { recordEvent, type EventNotifier } from './events.ts';
import { newCustomDomainId } from './ids.ts';
import { DNS_PROVIDERS, isOneOf, type CustomDomain, type CustomDomainFailureReason } from '../model.ts';
import type { PreviewTarget } from './previews.ts';
import type { SessionService } from './sessions.ts';
import { SHARE_TOKEN_PARAM, type ShareService } from './shares.ts';
import { type Database, isUniqueViolation } from '../store/database.ts';
import { findOwnedApp } from '../store/apps-store.ts';
import {
  countOpenCustomDomains,
  deleteCustomDomain,
  failPendingClaims,
  findCustomDomain,
  findVerifiedByDomain,
  insertCustomDomain,
  isClaimed,
  listCustomDomains,
  listOpenClaimsOf,
  failVerifiedClaim,
  markVerified,
  recordFailedCheck,
  recordMissedReverify,
  recordReverified,
} from '../store/custom-domains-store.ts';

/** What a create request asks for (the API's fields; the core checks how they combine). */
export interface CustomDomainSpec {
  domain: string;
  shareId?: string;
  sessionId?: string;
  port?: number;
  /** A deployed app of the caller's, by id or name (like `/v1/apps/{app}`). */
  appId?: string;
  dnsProvider?: string;
  /** Never stored, logged or echoed: refused while no provider needs it. */
  dnsCredentials?: Record<string, string> | null;
}

/** A claim with the addresses it serves at. */
export interface CustomDomainView {
  domain: CustomDomain;
  /** `{scheme}://{domain}[:port]/`: the public URL's scheme and port. */
  url: string;
  /** For a verified domain of a private share: a freshly signed link that sets the preview cookie; else null. */
  link: string | null;
  linkExpiresAt: string | null;
}

/**
 * Where a verified domain's request goes: a preview (a share's or a session's port, authorized like one), or
 * a deployed app (served like its own host, `api/preview/app-host.ts`).
 */
export type CustomDomainTarget = Extract<PreviewTarget, { kind: 'domain' }> | { kind: 'app'; domain: string; appId: string };

/** A claim's target as stored: exactly one of a share (with its session and port), a session's port, or an app. */
interface StoredTarget {
  shareId: string | null;
  sessionId: string | null;
  port: number | null;
  appId: string | null;
}

export interface CustomDomainOptions {
  reserved: ReservedNames;
  /** Seconds between two background checks of a pending claim. */
  checkIntervalSeconds: number;
  /** Seconds a claim may stay pending before it fails as expired. */
  pendingSeconds: number;
  /** Claims an account may hold that are not failed. */
  maxPerUser: number;
  /** Seconds between two re-checks of a verified claim's TXT record. */
  reverifySeconds: number;
  /** Re-checks in a row that do not find the record after which a verified claim fails (`record_missing`). */
  reverifyMisses: number;
}

/** How long a tls-check's fresh DNS answer for a domain is reused (a proxy may ask for every handshake). */
const TLS_RECHECK_REUSE_MS = 60_000;
/** Domains whose tls-check answer is remembered at once; older answers are dropped beyond this. */
const TLS_RECHECK_MEMORY = 1000;

/** Most claims (pending or verified) one account may hold. */
export const MAX_CUSTOM_DOMAINS_PER_USER = 100;

/** The create request's target fields, by their API names. */
const SPEC_FIELDS = { share_id: 'shareId', session_id: 'sessionId', port: 'port' } as const;

const input = (field: string, msg: string, type = 'value_error') => new InputError([{ loc: ['body', field], msg, type }]);

export class CustomDomainService {
  /** tls-check answers by claim id, each reused until `untilMs` (a pending lookup is shared the same way). */
  private readonly tlsRechecks = new Map<string, { untilMs: number; answer: Promise<boolean> }>();

  constructor(
    private readonly database: Database,
    private readonly sessions: SessionService,
    private readonly shares: ShareService,
    private readonly tokens: PreviewTokens,
    private readonly urls: AppUrls,
    private readonly hosts: CustomDomainHosts,
    private readonly resolver: TxtResolver,
    private readonly clock: Clock,
    private readonly notifier: EventNotifier,
    private readonly options: CustomDomainOptions,
  ) {}

  async create(principal: Principal, spec: CustomDomainSpec, actor: AuditActor): Promise<CustomDomainView> {
    const domain = normalizeDomain(spec.domain);
    const problem = domainProblem(domain, this.options.reserved);
    if (problem) throw input('domain', `domain ${problem}`);
    const provider = spec.dnsProvider ?? 'manual';
    if (!isOneOf(DNS_PROVIDERS, provider)) {
      throw input(
        'dns_provider',
        `dns_provider "${provider.slice(0, 40)}" is not supported: the supported value is "manual" (you create the TXT record at your DNS host)`,
        'enum',
      );
    }
    if (spec.dnsCredentials && Object.keys(spec.dnsCredentials).length > 0) {
      throw input(
        'dns_credentials',
        'dns_credentials are for DNS providers that sandboxd drives itself, and none is supported yet: with dns_provider "manual" you create the TXT record, so leave dns_credentials out (nothing was stored)',
      );
    }
    const target = await this.targetOfSpec(principal, spec);

    const open = await listOpenClaimsOf(this.database.db, domain);
    if (open.some((claim) => claim.status === 'verified' && claim.userId !== principal.userId)) {
      throw conflict(`${domain} is already verified by another account: a custom domain is served for one account only`);
    }
    const mine = open.find((claim) => claim.userId === principal.userId);
    if (mine) throw conflict(`you already have a ${mine.status} claim of ${domain} (${mine.id}): delete it first to map the domain anew`);
    if ((await countOpenCustomDomains(this.database.db, principal.userId)) >= this.options.maxPerUser) {
      throw new AppError(
        'QUOTA_EXCEEDED',
        `an account may hold at most ${this.options.maxPerUser} custom domains that are pending or verified: delete one first`,
      );
    }

    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + this.options.pendingSeconds * 1000).toISOString();
    const claim: CustomDomain = {
      id: newCustomDomainId(),
      userId: principal.userId,
      domain,
      ...target,
      dnsProvider: provider,
      verificationToken: newVerificationToken(),
      status: 'pending',
      failureReason: null,
      createdAt: now.toISOString(),
      expiresAt,
      verifiedAt: null,
      lastCheckedAt: null,
      lastError: null,
      // The user creates the record after reading this answer: the first background check comes one interval later.
      nextCheckAt: this.nextCheckAfter(now, expiresAt),
      recordSeenAt: null,
      missedChecks: 0,
    };
    let created: CustomDomain;
    try {
      created = await this.database.db.transaction().execute(async (trx) => {
        const inserted = await insertCustomDomain(trx, claim);
        await recordEvent(trx, this.clock, {
          type: 'custom_domain.created',
          userId: principal.userId,
          subjectId: inserted.id,
          data: {
            domain_id: inserted.id,
            domain,
            share_id: inserted.shareId,
            session_id: inserted.sessionId,
            port: inserted.port,
            app_id: inserted.appId,
            record_name: challengeName(domain),
            record_value: inserted.verificationToken,
            expires_at: expiresAt,
          },
        });
        await recordAudit(trx, {
          actor,
          action: 'custom_domain.create',
          target: { type: 'custom_domain', id: inserted.id },
          outcome: 'success',
          detail: {
            domain,
            share_id: inserted.shareId,
            session_id: inserted.sessionId,
            port: inserted.port,
            app_id: inserted.appId,
            dns_provider: provider,
          },
          at: now,
        });
        return inserted;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict(`you already have a claim of ${domain}: delete it first to map the domain anew`);
      throw error;
    }
    this.notifier.committed();
    return this.view(created);
  }

  async list(principal: Principal): Promise<CustomDomainView[]> {
    return Promise.all((await listCustomDomains(this.database.db, principal.userId)).map((claim) => this.view(claim)));
  }

  async get(principal: Principal, id: string): Promise<CustomDomainView> {
    return this.view(await this.getOwned(principal, id));
  }

  /** Deletes a claim; a verified domain stops being served with the next request, on every node. */
  async delete(principal: Principal, id: string, actor: AuditActor): Promise<CustomDomainView> {
    const claim = await this.getOwned(principal, id);
    const view = await this.view(claim, { withLink: false });
    const deleted = await this.database.db.transaction().execute(async (trx) => {
      if (!(await deleteCustomDomain(trx, claim.id))) return false;
      await recordDeletion(trx, this.clock, claim, 'deleted');
      await recordAudit(trx, {
        actor,
        action: 'custom_domain.delete',
        target: { type: 'custom_domain', id: claim.id },
        outcome: 'success',
        detail: { domain: claim.domain, status: claim.status },
        at: this.clock.now(),
      });
      return true;
    });
    if (!deleted) throw notFound(`custom domain ${id}`);
    // Only the verified claim of a domain is routed; a pending one must not unroute another account's.
    if (claim.status === 'verified') this.hosts.remove(claim.domain);
    this.notifier.committed();
    return view;
  }

  /**
   * Checks the TXT record now. A verified claim is answered as it is; a failed one is final (409); a pending
   * one is verified, or keeps what the check found wrong in `lastError`.
   */
  async verify(principal: Principal, id: string): Promise<CustomDomainView> {
    const claim = await this.getOwned(principal, id);
    if (claim.status === 'verified') return this.view(claim);
    if (claim.status === 'failed')
      throw conflict(`this claim of ${claim.domain} failed (${claim.lastError ?? claim.failureReason}): delete it and create a new claim`);
    return this.view(await this.check(claim));
  }

  /**
   * One check of a pending claim (the verify operation, and the background checker holding the row's lease
   * as `leaseOwner`): expire it when its time is up, else ask DNS and record the outcome. A verified claim
   * (the checker only) is re-checked instead. Answers the claim as it is afterwards.
   */
  async check(claim: CustomDomain, leaseOwner?: string): Promise<CustomDomain> {
    if (claim.status === 'verified') {
      if (leaseOwner !== undefined) await this.reverify(claim, leaseOwner);
      return (await findCustomDomain(this.database.db, claim.id)) ?? claim;
    }
    if (Date.parse(claim.expiresAt) <= this.clock.now().getTime()) {
      const days = Math.round((this.options.pendingSeconds / 86_400) * 10) / 10;
      await this.fail(claim, 'expired', `not verified within ${days} days of the claim (by ${claim.expiresAt}): create a new claim`);
      return (await findCustomDomain(this.database.db, claim.id)) ?? claim;
    }
    const result = await checkChallenge(this.resolver, claim.domain, claim.verificationToken);
    const at = this.clock.now();
    if (result.verified) {
      await this.markVerified(claim, at);
    } else {
      await recordFailedCheck(
        this.database.db,
        claim.id,
        { now: at.toISOString(), error: result.error, nextCheckAt: this.nextCheckAfter(at, claim.expiresAt) },
        leaseOwner,
      );
    }
    return (await findCustomDomain(this.database.db, claim.id)) ?? claim;
  }

  /**
   * Where a request whose Host is `hostname` goes: the session and port of its verified claim, or its app. 404
   * when the name is not (or no longer) a verified domain, or when the share it maps expired: it never falls
   * back to anything else. (An app's claim goes with the app, so its app always exists here, or the app's own
   * lookup answers 404.)
   */
  async targetOf(hostname: string): Promise<CustomDomainTarget> {
    const claim = await findVerifiedByDomain(this.database.db, hostname);
    if (!claim) {
      throw new AppError('NOT_FOUND', `${hostname} is not a verified custom domain of this server: it was deleted, or its DNS TXT record was not verified yet`);
    }
    if (claim.shareId !== null) {
      const share = await this.shares.findValid(claim.shareId);
      if (!share)
        throw new AppError('NOT_FOUND', `the share that custom domain ${hostname} is served like has expired: its owner can map the domain to another share`);
      return { kind: 'domain', domain: hostname, sessionId: share.sessionId, port: share.port };
    }
    if (claim.appId !== null) return { kind: 'app', domain: hostname, appId: claim.appId };
    if (claim.sessionId === null || claim.port === null) throw new AppError('NOT_FOUND', `custom domain ${hostname} serves nothing`);
    return { kind: 'domain', domain: hostname, sessionId: claim.sessionId, port: claim.port };
  }

  /**
   * Whether a TLS certificate may be issued for the name (a reverse proxy's on-demand "ask"): only for a
   * verified claim whose TXT record is there now. The answer of DNS is reused for a minute per domain, so a
   * proxy asking at every handshake costs no more lookups than that; a record not found here answers no
   * without counting as a miss of the claim (only the background re-checks fail a claim, at their own pace).
   */
  async isVerified(hostname: string): Promise<boolean> {
    const domain = normalizeDomain(hostname);
    if (domainProblem(domain, this.options.reserved) !== null) return false;
    const claim = await findVerifiedByDomain(this.database.db, domain);
    if (!claim) return false;
    const nowMs = this.clock.now().getTime();
    const remembered = this.tlsRechecks.get(claim.id);
    if (remembered && remembered.untilMs > nowMs) return remembered.answer;
    const answer = this.recheckForTls(claim);
    if (this.tlsRechecks.size >= TLS_RECHECK_MEMORY) {
      for (const [id, entry] of this.tlsRechecks) if (entry.untilMs <= nowMs) this.tlsRechecks.delete(id);
      if (this.tlsRechecks.size >= TLS_RECHECK_MEMORY) this.tlsRechecks.clear();
    }
    this.tlsRechecks.set(claim.id, { untilMs: nowMs + TLS_RECHECK_REUSE_MS, answer });
    return answer;
  }

  private async recheckForTls(claim: CustomDomain): Promise<boolean> {
    const result = await checkChallenge(this.resolver, claim.domain, claim.verificationToken);
    if (!result.verified) return false;
    const at = this.clock.now();
    await recordReverified(this.database.db, claim.id, { now: at.toISOString(), nextCheckAt: this.nextReverifyAfter(at) });
    return true;
  }

  /**
   * A re-check of a verified claim (the background checker, holding the row's lease as `leaseOwner`): the record
   * found resets the count of misses; a miss (no record, another value, or a failed lookup: a dangling
   * delegation may answer nothing forever) counts one, and the last allowed one fails the claim.
   */
  private async reverify(claim: CustomDomain, leaseOwner: string): Promise<void> {
    const result = await checkChallenge(this.resolver, claim.domain, claim.verificationToken);
    const at = this.clock.now();
    const now = at.toISOString();
    const nextCheckAt = this.nextReverifyAfter(at);
    if (result.verified) {
      await recordReverified(this.database.db, claim.id, { now, nextCheckAt }, leaseOwner);
      return;
    }
    const limit = this.options.reverifyMisses;
    const missed = claim.missedChecks + 1;
    const error = `the TXT record that verified this domain was not found at a re-check (${missed} of ${limit} in a row before the domain stops being served): ${result.error}`;
    const after = await recordMissedReverify(this.database.db, claim.id, { now, error, nextCheckAt }, leaseOwner);
    if (!after || after.missedChecks < limit) return;
    const message = `the TXT record ${challengeName(claim.domain)} was not found at ${after.missedChecks} re-checks in a row (last: ${result.error}); the domain is no longer served: put the record back and create a new claim`;
    const failed = await this.database.db.transaction().execute(async (trx) => {
      const row = await failVerifiedClaim(trx, claim.id, { reason: 'record_missing', message, now });
      if (row) await recordFailure(trx, this.clock, row, 'record_missing', message);
      return row;
    });
    if (!failed) return;
    this.hosts.remove(failed.domain);
    this.tlsRechecks.delete(failed.id);
    this.notifier.committed();
  }

  /** For a 404 of the API: says when the Host is a claimed domain that is not verified, else null. */
  async unverifiedHint(hostname: string): Promise<string | null> {
    if (domainProblem(hostname, this.options.reserved) !== null || this.hosts.has(hostname)) return null;
    if (!(await isClaimed(this.database.db, hostname))) return null;
    return `${hostname} is a custom domain that is not verified: sandboxd serves it once the DNS TXT record ${challengeName(hostname)} is verified`;
  }

  private async targetOfSpec(principal: Principal, spec: CustomDomainSpec): Promise<StoredTarget> {
    if (spec.appId !== undefined) {
      const others = (['share_id', 'session_id', 'port'] as const).filter((field) => spec[SPEC_FIELDS[field]] !== undefined);
      if (others.length > 0)
        throw input('app_id', `app_id cannot be combined with ${others.join(', ')}: a domain serves one target (an app, a share, or a session's port)`);
      // Another user's app is a 404 like a missing one: its existence is never revealed.
      const app = await findOwnedApp(this.database.db, principal.userId, spec.appId);
      if (!app) throw notFound(`app ${spec.appId}`);
      return { shareId: null, sessionId: null, port: null, appId: app.id };
    }
    if (spec.shareId !== undefined) {
      const share = await this.shares.getOwned(principal, spec.shareId);
      if (spec.sessionId !== undefined && spec.sessionId !== share.sessionId)
        throw input('session_id', `session_id must be the share's session (${share.sessionId}), or left out`);
      if (spec.port !== undefined && spec.port !== share.port) throw input('port', `port must be the share's port (${share.port}), or left out`);
      if (!(await this.shares.findValid(share.id))) throw conflict(`share ${share.id} has expired: map the domain to a share that is still valid`);
      return { shareId: share.id, sessionId: share.sessionId, port: share.port, appId: null };
    }
    if (spec.sessionId === undefined) throw input('share_id', 'give share_id, or session_id and port, or app_id', 'missing');
    if (spec.port === undefined) throw input('port', 'port is required with session_id (or give share_id instead)', 'missing');
    const session = await this.sessions.getOwned(principal, spec.sessionId);
    return { shareId: null, sessionId: session.id, port: spec.port, appId: null };
  }

  /** pending → verified, and the other pending claims of the domain fail, in one transaction. */
  private async markVerified(claim: CustomDomain, at: Date): Promise<void> {
    const now = at.toISOString();
    let verified: CustomDomain | undefined;
    try {
      verified = await this.database.db.transaction().execute(async (trx) => {
        const row = await markVerified(trx, claim.id, now, this.nextReverifyAfter(at));
        if (!row) return undefined; // no longer pending: deleted, expired or verified meanwhile
        await recordEvent(trx, this.clock, {
          type: 'custom_domain.verified',
          userId: row.userId,
          subjectId: row.id,
          data: {
            domain_id: row.id,
            domain: row.domain,
            share_id: row.shareId,
            session_id: row.sessionId,
            port: row.port,
            app_id: row.appId,
            verified_at: now,
          },
        });
        const losers = await failPendingClaims(
          trx,
          { domain: row.domain, exceptId: row.id },
          { reason: 'verified_elsewhere', message: verifiedElsewhere(row.domain), now },
        );
        for (const loser of losers) await recordFailure(trx, this.clock, loser, 'verified_elsewhere', verifiedElsewhere(row.domain));
        return row;
      });
    } catch (error) {
      // The partial unique index: another account's claim of the domain was verified first.
      if (!isUniqueViolation(error)) throw error;
      await this.fail(claim, 'verified_elsewhere', verifiedElsewhere(claim.domain));
      return;
    }
    if (!verified) return;
    this.hosts.add(verified.domain);
    this.notifier.committed();
  }

  private async fail(claim: CustomDomain, reason: CustomDomainFailureReason, message: string): Promise<void> {
    const failed = await this.database.db.transaction().execute(async (trx) => {
      const [row] = await failPendingClaims(trx, { id: claim.id }, { reason, message, now: this.clock.now().toISOString() });
      if (row) await recordFailure(trx, this.clock, row, reason, message);
      return row;
    });
    if (failed) this.notifier.committed();
  }

  private nextReverifyAfter(now: Date): string {
    return new Date(now.getTime() + this.options.reverifySeconds * 1000).toISOString();
  }

  private nextCheckAfter(now: Date, expiresAt: string): string {
    return new Date(Math.min(now.getTime() + this.options.checkIntervalSeconds * 1000, Date.parse(expiresAt))).toISOString();
  }

  private async getOwned(principal: Principal, id: string): Promise<CustomDomain> {
    const claim = await findCustomDomain(this.database.db, id);
    if (!claim || claim.userId !== principal.userId) throw notFound(`custom domain ${id}`);
    return claim;
  }

  private async view(claim: CustomDomain, { withLink = true } = {}): Promise<CustomDomainView> {
    const url = this.urls.customDomainUrl(claim.domain);
    if (!withLink || claim.status !== 'verified' || claim.shareId === null) return { domain: claim, url, link: null, linkExpiresAt: null };
    const share = await this.shares.findValid(claim.shareId);
    if (!share || share.isPublic) return { domain: claim, url, link: null, linkExpiresAt: null };
    const expiry = this.shares.linkExpiry(share);
    const token = await this.tokens.sign('link', share.id, expiry);
    return { domain: claim, url, link: `${url}?${SHARE_TOKEN_PARAM}=${token}`, linkExpiresAt: expiry.toISOString() };
  }
}

function verifiedElsewhere(domain: string): string {
  return `another account verified ${domain} first: a custom domain is served for one account only`;
}
