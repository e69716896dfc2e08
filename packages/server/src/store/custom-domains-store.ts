/**
 * Persistence of custom domains. Every change of a claim's status is a conditional UPDATE on the status it
 * expects, so two nodes (or the verify operation and the background checker) never both move one claim, and
 * the partial unique index `custom_domains_one_verified` lets only one claim of a domain be verified.
 */
import type { CustomDomain, CustomDomainFailureReason } from '../model.ts';
import type { CustomDomainRow } from './schema.ts';
import type { Executor } from './database.ts';

function toCustomDomain(row: CustomDomainRow): CustomDomain {
  return {
    id: row.id,
    userId: row.user_id,
    domain: row.domain,
    shareId: row.share_id,
    sessionId: row.session_id,
    port: row.port,
    appId: row.app_id,
    dnsProvider: row.dns_provider,
    verificationToken: row.verification_token,
    status: row.status,
    failureReason: row.failure_reason,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    verifiedAt: row.verified_at,
    lastCheckedAt: row.last_checked_at,
    lastError: row.last_error,
    nextCheckAt: row.next_check_at,
    recordSeenAt: row.record_seen_at,
    missedChecks: Number(row.missed_checks),
  };
}

/** Inserts a claim; throws the driver's unique violation when the user already has an open claim of the domain. */
export async function insertCustomDomain(db: Executor, domain: CustomDomain): Promise<CustomDomain> {
  const row = await db
    .insertInto('custom_domains')
    .values({
      id: domain.id,
      user_id: domain.userId,
      domain: domain.domain,
      share_id: domain.shareId,
      session_id: domain.sessionId,
      port: domain.port,
      app_id: domain.appId,
      dns_provider: domain.dnsProvider,
      verification_token: domain.verificationToken,
      status: domain.status,
      failure_reason: domain.failureReason,
      created_at: domain.createdAt,
      expires_at: domain.expiresAt,
      verified_at: domain.verifiedAt,
      last_checked_at: domain.lastCheckedAt,
      last_error: domain.lastError,
      next_check_at: domain.nextCheckAt,
      record_seen_at: domain.recordSeenAt,
      missed_checks: domain.missedChecks,
      check_lease_owner: null,
      check_lease_until: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toCustomDomain(row);
}

export async function findCustomDomain(db: Executor, id: string): Promise<CustomDomain | undefined> {
  const row = await db.selectFrom('custom_domains').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toCustomDomain(row);
}

/** The user's claims, newest first. */
export async function listCustomDomains(db: Executor, userId: number): Promise<CustomDomain[]> {
  const rows = await db.selectFrom('custom_domains').selectAll().where('user_id', '=', userId).orderBy('created_at', 'desc').orderBy('id').execute();
  return rows.map(toCustomDomain);
}

/** How many claims the user has that are not failed. */
export async function countOpenCustomDomains(db: Executor, userId: number): Promise<number> {
  const row = await db
    .selectFrom('custom_domains')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .where('status', '<>', 'failed')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The claims of a domain by any user that are not failed (the verified one, if any, and pending ones). */
export async function listOpenClaimsOf(db: Executor, domain: string): Promise<CustomDomain[]> {
  const rows = await db.selectFrom('custom_domains').selectAll().where('domain', '=', domain).where('status', '<>', 'failed').execute();
  return rows.map(toCustomDomain);
}

/** The verified claim of a domain: what a request with that Host is served from. */
export async function findVerifiedByDomain(db: Executor, domain: string): Promise<CustomDomain | undefined> {
  const row = await db.selectFrom('custom_domains').selectAll().where('domain', '=', domain).where('status', '=', 'verified').executeTakeFirst();
  return row && toCustomDomain(row);
}

/** Whether any claim of the domain exists, whatever its status (for the "not verified" hint of a 404). */
export async function isClaimed(db: Executor, domain: string): Promise<boolean> {
  const row = await db.selectFrom('custom_domains').select('id').where('domain', '=', domain).limit(1).executeTakeFirst();
  return row !== undefined;
}

/** Every verified domain name (the routing index of each node). */
export async function listVerifiedDomainNames(db: Executor): Promise<string[]> {
  const rows = await db.selectFrom('custom_domains').select('domain').where('status', '=', 'verified').execute();
  return rows.map((row) => row.domain);
}

/**
 * pending → verified, only from pending, with its first re-check due at `nextCheckAt`. Throws the unique
 * violation when another claim of the domain was verified meanwhile (the caller's transaction then rolls back).
 * Answers the verified row, or undefined when the claim was no longer pending.
 */
export async function markVerified(db: Executor, id: string, now: string, nextCheckAt: string): Promise<CustomDomain | undefined> {
  const row = await db
    .updateTable('custom_domains')
    .set({
      status: 'verified',
      verified_at: now,
      last_checked_at: now,
      last_error: null,
      next_check_at: nextCheckAt,
      record_seen_at: now,
      missed_checks: 0,
      check_lease_owner: null,
      check_lease_until: null,
    })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst();
  return row && toCustomDomain(row);
}

/** pending → failed, only from pending; answers the failed rows. `exceptId` keeps one claim out (the winner). */
export async function failPendingClaims(
  db: Executor,
  where: { id: string } | { domain: string; exceptId: string },
  failure: { reason: CustomDomainFailureReason; message: string; now: string },
): Promise<CustomDomain[]> {
  let query = db
    .updateTable('custom_domains')
    .set({
      status: 'failed',
      failure_reason: failure.reason,
      last_error: failure.message,
      next_check_at: null,
      check_lease_owner: null,
      check_lease_until: null,
    })
    .where('status', '=', 'pending');
  query = 'id' in where ? query.where('id', '=', where.id) : query.where('domain', '=', where.domain).where('id', '<>', where.exceptId);
  return (await query.returningAll().execute()).map(toCustomDomain);
}

/**
 * Records a check that did not verify a pending claim: what was wrong and when to look next. With `owner`,
 * only while that checker still holds the row's lease (which it drops); without, leases are left alone.
 */
export async function recordFailedCheck(
  db: Executor,
  id: string,
  check: { now: string; error: string; nextCheckAt: string },
  owner?: string,
): Promise<boolean> {
  let query = db
    .updateTable('custom_domains')
    .set({
      last_checked_at: check.now,
      last_error: check.error,
      next_check_at: check.nextCheckAt,
      ...(owner !== undefined ? { check_lease_owner: null, check_lease_until: null } : {}),
    })
    .where('id', '=', id)
    .where('status', '=', 'pending');
  if (owner !== undefined) query = query.where('check_lease_owner', '=', owner);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * A re-check of a verified claim found its record: it is seen now, and looked at again at `nextCheckAt`. With
 * `owner`, only while that checker holds the row's lease (which it drops); without, leases are left alone.
 */
export async function recordReverified(db: Executor, id: string, check: { now: string; nextCheckAt: string }, owner?: string): Promise<boolean> {
  let query = db
    .updateTable('custom_domains')
    .set({
      last_checked_at: check.now,
      record_seen_at: check.now,
      last_error: null,
      missed_checks: 0,
      next_check_at: check.nextCheckAt,
      ...(owner !== undefined ? { check_lease_owner: null, check_lease_until: null } : {}),
    })
    .where('id', '=', id)
    .where('status', '=', 'verified');
  if (owner !== undefined) query = query.where('check_lease_owner', '=', owner);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * A re-check of a verified claim did not find its record: one more miss in a row, what was wrong, and when to
 * look next. Only while `owner` holds the row's lease (which it drops). Answers the claim afterwards (its
 * `missedChecks` says whether the limit is reached), or undefined when it is no longer verified or ours.
 */
export async function recordMissedReverify(
  db: Executor,
  id: string,
  check: { now: string; error: string; nextCheckAt: string },
  owner: string,
): Promise<CustomDomain | undefined> {
  const row = await db
    .updateTable('custom_domains')
    .set((eb) => ({
      last_checked_at: check.now,
      last_error: check.error,
      missed_checks: eb('missed_checks', '+', 1),
      next_check_at: check.nextCheckAt,
      check_lease_owner: null,
      check_lease_until: null,
    }))
    .where('id', '=', id)
    .where('status', '=', 'verified')
    .where('check_lease_owner', '=', owner)
    .returningAll()
    .executeTakeFirst();
  return row && toCustomDomain(row);
}

/** verified → failed, only from verified (it stops being served); answers the failed row. */
export async function failVerifiedClaim(
  db: Executor,
  id: string,
  failure: { reason: CustomDomainFailureReason; message: string; now: string },
): Promise<CustomDomain | undefined> {
  const row = await db
    .updateTable('custom_domains')
    .set({
      status: 'failed',
      failure_reason: failure.reason,
      last_error: failure.message,
      last_checked_at: failure.now,
      next_check_at: null,
      check_lease_owner: null,
      check_lease_until: null,
    })
    .where('id', '=', id)
    .where('status', '=', 'verified')
    .returningAll()
    .executeTakeFirst();
  return row && toCustomDomain(row);
}

/** Claims the checker looks at: pending ones (until verified) and verified ones (re-checks). */
const CHECKED_STATUSES = ['pending', 'verified'] as const;

/** Pending claims whose check, and verified claims whose re-check, is due and that no live lease holds, oldest due first. */
export async function listDueChecks(db: Executor, now: string, limit: number): Promise<CustomDomain[]> {
  const rows = await db
    .selectFrom('custom_domains')
    .selectAll()
    .where('status', 'in', CHECKED_STATUSES)
    .where('next_check_at', '<=', now)
    .where((eb) => eb.or([eb('check_lease_until', 'is', null), eb('check_lease_until', '<', now)]))
    .orderBy('next_check_at')
    .limit(limit)
    .execute();
  return rows.map(toCustomDomain);
}

/** When the next check or re-check that no live lease holds falls due (any node's), or null when there is none. */
export async function nextCheckDue(db: Executor, now: string): Promise<string | null> {
  const row = await db
    .selectFrom('custom_domains')
    .select((eb) => eb.fn.min('next_check_at').as('due'))
    .where('status', 'in', CHECKED_STATUSES)
    .where((eb) => eb.or([eb('check_lease_until', 'is', null), eb('check_lease_until', '<', now)]))
    .executeTakeFirst();
  return (row?.due as string | null | undefined) ?? null;
}

/** Takes a due claim for one check: of several checkers exactly one wins (a conditional UPDATE). */
export async function claimCheck(db: Executor, id: string, now: string, leaseUntil: string, owner: string): Promise<boolean> {
  const result = await db
    .updateTable('custom_domains')
    .set({ check_lease_owner: owner, check_lease_until: leaseUntil })
    .where('id', '=', id)
    .where('status', 'in', CHECKED_STATUSES)
    .where('next_check_at', '<=', now)
    .where((eb) => eb.or([eb('check_lease_until', 'is', null), eb('check_lease_until', '<', now)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Gives a claimed row back untouched (a checker stopping mid-check), only while `owner` holds it. */
export async function releaseCheck(db: Executor, id: string, owner: string): Promise<void> {
  await db
    .updateTable('custom_domains')
    .set({ check_lease_owner: null, check_lease_until: null })
    .where('id', '=', id)
    .where('check_lease_owner', '=', owner)
    .execute();
}

/** What a claim is served like, when that goes away: a share, or a deployed app. */
export type DomainServed = { shareId: string } | { appId: string };

/** The claims (any status) that map a share or serve an app (deleted with it). */
export async function listCustomDomainsServing(db: Executor, served: DomainServed): Promise<CustomDomain[]> {
  const query = db.selectFrom('custom_domains').selectAll();
  const rows = await ('shareId' in served ? query.where('share_id', '=', served.shareId) : query.where('app_id', '=', served.appId)).execute();
  return rows.map(toCustomDomain);
}

/** The claims that are not failed of the given apps (what an app's record shows), oldest first. */
export async function listOpenCustomDomainsOfApps(db: Executor, appIds: string[]): Promise<CustomDomain[]> {
  if (appIds.length === 0) return [];
  const rows = await db
    .selectFrom('custom_domains')
    .selectAll()
    .where('app_id', 'in', appIds)
    .where('status', '<>', 'failed')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toCustomDomain);
}

export async function deleteCustomDomain(db: Executor, id: string): Promise<boolean> {
  const result = await db.deleteFrom('custom_domains').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
