/** GET /v1/custom-domains/{domain_id}: one of the caller's claims; another user's id answers 404. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { DomainIdParams, toCustomDomainRecord } from './schemas.ts';

export function registerGetCustomDomain(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/custom-domains/:domain_id',
    {
      schema: {
        tags: ['custom-domains'],
        summary: "One of your custom domains (a private share's with a freshly signed link)",
        security: BEARER_OR_API_KEY,
        params: DomainIdParams,
        response: authedResponses({ 200: Type.Ref('CustomDomain') }, { 404: 'No such custom domain among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => toCustomDomainRecord(await services.sandbox.customDomains.get(principalOf(request), request.params.domain_id)),
  );
}
