/** GET /v1/browser/capabilities: what the browser of this server can do, and the caller's limits. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';

export function registerBrowserCapabilities(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/browser/capabilities',
    {
      schema: {
        tags: ['browser'],
        summary: 'What the browser can do',
        description:
          "The engine and its version, the interactions, formats and wait conditions served, viewport bounds and defaults, session timeouts and your plan's session limit.",
        security: BEARER_OR_API_KEY,
        response: authedResponses({ 200: Type.Ref('BrowserCapabilities') }),
      },
      onRequest: requireAuth,
    },
    async (request) => services.sandbox.browser.capabilities(principalOf(request)),
  );
}
