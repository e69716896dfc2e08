/** DELETE /v1/custom-domains/{domain_id}: the domain stops being served with the next request, on every node. */
import { Type } from 'typebox';
import { auditActorOf } from '../../audit-context.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { DomainIdParams, toCustomDomainRecord } from './schemas.ts';

export function registerDeleteCustomDomain(app: App, { services, requireAuth }: RouteContext): void {
  app.delete(
    '/v1/custom-domains/:domain_id',
    {
      schema: {
        tags: ['custom-domains'],
        summary: 'Delete one of your custom domains',
        description:
          'A verified domain stops being served at once (requests with its Host then reach the API as any unknown host does). Answers the claim as it was.',
        security: BEARER_OR_API_KEY,
        params: DomainIdParams,
        response: authedResponses({ 200: Type.Ref('CustomDomain') }, { 404: 'No such custom domain among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => toCustomDomainRecord(await services.sandbox.customDomains.delete(principalOf(request), request.params.domain_id, auditActorOf(request))),
  );
}
