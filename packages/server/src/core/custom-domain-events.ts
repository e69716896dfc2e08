/**
 * The records that go with a custom domain's end (its `custom_domain.*` events), shared by the custom domain
 * service and by share and app deletion, which delete the domains that serve them in their own transaction.
 */
import type { Clock } from './clock.ts';
import { recordEvent } from './events.ts';
import type { CustomDomain, CustomDomainDeleteReason, CustomDomainFailureReason } from '../model.ts';
import { deleteCustomDomain, listCustomDomainsServing, type DomainServed } from '../store/custom-domains-store.ts';
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
 * Deletes the custom domains that map a share or serve an app, in the transaction that deletes it, each with its
 * `custom_domain.deleted` event (`share_deleted` or `app_deleted`): a domain never outlives what it is served like.
 * Answers them, so the caller can drop the verified ones from its routing set after the commit.
 */
export async function deleteDomainsServing(trx: Executor, clock: Clock, served: DomainServed): Promise<CustomDomain[]> {
  const reason = 'shareId' in served ? 'share_deleted' : 'app_deleted';
  const claims = await listCustomDomainsServing(trx, served);
  for (const claim of claims) {
    if (await deleteCustomDomain(trx, claim.id)) await recordDeletion(trx, clock, claim, reason);
  }
  return claims;
}
