/** GET /v1/browser/sessions/{session_id}: one of the caller's browser sessions, open or ended. */
import { Type } from 'typebox';
import { BrowserSessionIdParams } from '../../../contract/browser/index.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';

export function registerGetBrowserSession(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/browser/sessions/:session_id',
    {
      schema: {
        tags: ['browser'],
        summary: 'Get a browser session',
        description: 'Its status, current URL, activity and expiry; an ended session says why in `end_reason`.',
        security: BEARER_OR_API_KEY,
        params: BrowserSessionIdParams,
        response: authedResponses({ 200: Type.Ref('BrowserSessionResponse') }, { 404: 'No such browser session among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => services.sandbox.browser.getSession(principalOf(request), request.params.session_id),
  );
}
