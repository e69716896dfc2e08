/** GET /v1/browser/credentials: the caller's stored credentials, without their passwords. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';

export function registerListBrowserCredentials(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/browser/credentials',
    {
      schema: {
        tags: ['browser'],
        summary: "List the caller's browser credentials",
        security: BEARER_OR_API_KEY,
        response: authedResponses({ 200: Type.Ref('BrowserCredentialList') }),
      },
      onRequest: requireAuth,
    },
    async (request) => services.sandbox.browser.listCredentials(principalOf(request)),
  );
}
