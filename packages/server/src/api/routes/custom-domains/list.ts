/** GET /v1/custom-domains: the caller's custom domain claims, newest first. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toCustomDomainRecord } from './schemas.ts';

export function registerListCustomDomains(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/custom-domains',
    {
      schema: {
        tags: ['custom-domains'],
        summary: 'Your custom domains, newest first',
        security: BEARER_OR_API_KEY,
        response: authedResponses({ 200: Type.Ref('CustomDomainList') }),
      },
      onRequest: requireAuth,
    },
    async (request) => ({ custom_domains: (await services.sandbox.customDomains.list(principalOf(request))).map(toCustomDomainRecord) }),
  );
}
