/** GET /v1/browser/usage and /v1/browser/usage/history: what the caller's renders and sessions used. */
import { Type } from 'typebox';
import { BrowserUsageHistoryQuery } from '../../../contract/browser/index.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';

export function registerBrowserUsage(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/browser/usage',
    {
      schema: {
        tags: ['browser'],
        summary: 'Browser usage statistics of the caller',
        description: "Renders, sessions, pages, screenshots and browser seconds, in all and in the last 30 days, with the open sessions and your plan's limit.",
        security: BEARER_OR_API_KEY,
        response: authedResponses({ 200: Type.Ref('BrowserUsageSummary') }),
      },
      onRequest: requireAuth,
    },
    async (request) => services.sandbox.browser.usage(principalOf(request)),
  );

  app.get(
    '/v1/browser/usage/history',
    {
      schema: {
        tags: ['browser'],
        summary: 'Browser usage history',
        description:
          'One record per render and per session, newest first, a page at a time (`limit`, default 50; `offset`, default 0); `total` counts them all.',
        security: BEARER_OR_API_KEY,
        querystring: BrowserUsageHistoryQuery,
        response: authedResponses({ 200: Type.Ref('BrowserUsageHistory') }),
      },
      onRequest: requireAuth,
    },
    async (request) => services.sandbox.browser.usageHistory(principalOf(request), { limit: request.query.limit, offset: request.query.offset }),
  );
}
