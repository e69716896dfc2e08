/** DELETE /v1/browser/sessions/{session_id}: close a browser session (200 with JSON, as the published clients expect). */
import { Type } from 'typebox';
import { BrowserSessionIdParams } from '../../../contract/browser/index.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';

export function registerCloseBrowserSession(app: App, { services, requireAuth }: RouteContext): void {
  app.delete(
    '/v1/browser/sessions/:session_id',
    {
      schema: {
        tags: ['browser'],
        summary: 'Close a browser session',
        description:
          'Closes the browser and ends its VM. Answers 200 with JSON (clients read a 200 as "closed"); a session that is already closed, or not yours, is 404 (clients read that as "already closed").',
        security: BEARER_OR_API_KEY,
        params: BrowserSessionIdParams,
        response: authedResponses({ 200: Type.Ref('BrowserSessionCloseResponse') }, { 404: 'No open browser session of that id among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => services.sandbox.browser.closeSession(principalOf(request), request.params.session_id),
  );
}
