/** GET /v1/browser/sessions/: the caller's open browser sessions. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';

export function registerListBrowserSessions(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/browser/sessions/',
    {
      schema: {
        tags: ['browser'],
        summary: "List the caller's active browser sessions",
        description: 'Sessions that ended are not listed (`GET /v1/browser/usage/history` has them). The path also answers without its trailing slash.',
        security: BEARER_OR_API_KEY,
        response: authedResponses({ 200: Type.Ref('BrowserSessionListResponse') }),
      },
      onRequest: requireAuth,
    },
    async (request) => services.sandbox.browser.listSessions(principalOf(request)),
  );
}
