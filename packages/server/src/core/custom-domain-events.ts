/**
 * The records that go with a custom domain's end (its `custom_domain.*` events), shared by the custom domain
 * service and by share and app deletion, which delete the domains that serve them in their own transaction.
 */
import type { Clock } from './clock.ts';
import { recordEvent } from './events.ts';
import type { CustomDomain, CustomDomainDeleteReason, CustomDomainFailureReason } from '../model.ts';
import { deleteCustomDomain, listCustomDomainsOfApp, listCustomDomainsOfShare } from '../store/custom-domains-store.ts';
import type { Executor } from '../store/database.ts';

/** Records that a claim failed for good. */
export async function recordFailure(db: Executor, clock: Clock, claim: CustomDomain, reason: CustomDomainFailureReason, message: string): Promise<void> {
  await recordEvent(db, clock, {
    type: 'custom_domain.failed',
    userId: claim.userId,
    subjectId: claim.id,
    data: { domain_id: claim.id, domain: claim.domain, reason, error: message },
  });
}

/** Records that a claim was deleted (by its owner, or with its share or app). */
export async function recordDeletion(db: Executor, clock: Clock, claim: CustomDomain, reason: CustomDomainDeleteReason): Promise<void> {
  await recordEvent(db, clock, {
    type: 'custom_domain.deleted',
    userId: claim.userId,
    subjectId: claim.id,
    data: { domain_id: claim.id, domain: claim.domain, reason, status: claim.status },
  });
}

/**
 * Deletes the custom domains that map a share, in the transaction that deletes the share, each with its
 * `custom_domain.deleted` event: a domain never outlives what it is served like. Answers them, so the caller
 * can drop the verified ones from its routing set after the commit.
 */
export async function deleteDomainsOfShare(trx: Executor, clock: Clock, shareId: string): Promise<CustomDomain[]> {
  const claims = await listCustomDomainsOfShare(trx, shareId);
  for (const claim of claims) {
    if (await deleteCustomDomain(trx, claim.id)) await recordDeletion(trx, clock, claim, 'share_deleted');
  }
  return claims;
}

/**
 * Deletes the custom domains that serve an app, in the transaction that deletes the app, each with its
 * `custom_domain.deleted` event (reason `app_deleted`). Answers them, for the caller's routing set.
 */
export async function deleteDomainsOfApp(trx: Executor, clock: Clock, appId: string): Promise<CustomDomain[]> {
  const claims = await listCustomDomainsOfApp(trx, appId);
  for (const claim of claims) {
    if (await deleteCustomDomain(trx, claim.id)) await recordDeletion(trx, clock, claim, 'app_deleted');
  }
  return claims;
}
