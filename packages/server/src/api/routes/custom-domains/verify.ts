/** POST /v1/custom-domains/{domain_id}/verify: look up the TXT record now and answer the claim. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { DomainIdParams, toCustomDomainRecord } from './schemas.ts';

export function registerVerifyCustomDomain(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/v1/custom-domains/:domain_id/verify',
    {
      schema: {
        tags: ['custom-domains'],
        summary: 'Check the TXT record of a custom domain now',
        description:
          "Asks DNS (SANDBOXD_DNS_SERVERS, else the system resolvers) for the TXT record in `verification`. A match makes the claim `verified` (and fails other accounts' pending claims of the domain); otherwise it stays `pending` with what was found in `last_error`. " +
          'A verified claim is answered as it is (it stays verified until deleted); a failed one answers 409.',
        security: BEARER_OR_API_KEY,
        params: DomainIdParams,
        response: authedResponses(
          { 200: Type.Ref('CustomDomain') },
          { 404: 'No such custom domain among yours', 409: 'The claim failed (expired, or verified by another account): create a new one' },
        ),
      },
      onRequest: requireAuth,
    },
    async (request) => toCustomDomainRecord(await services.sandbox.customDomains.verify(principalOf(request), request.params.domain_id)),
  );
}
