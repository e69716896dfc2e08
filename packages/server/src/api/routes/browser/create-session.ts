/** POST /v1/browser/sessions/: start a browser (Chromium in a VM of its own) that later interactions drive. */
import { Type } from 'typebox';
import type { BrowserSessionCreateRequest } from '../../../contract/browser/index.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';

export function registerCreateBrowserSession(app: App, { services, requireAuthOrBodyKey }: RouteContext): void {
  app.post(
    '/v1/browser/sessions/',
    {
      schema: {
        tags: ['browser'],
        summary: 'Create a browser session',
        description:
          'Starts a browser with a blank page (`about:blank`) and answers its `session_id`, which every interaction names in its body. ' +
          "The session closes after `idle_timeout_seconds` without an interaction, at the latest after the server's session lifetime, or on `DELETE`. " +
          'Every field of the body has a default (send `{}`). The path also answers without its trailing slash.',
        security: BEARER_OR_API_KEY,
        body: Type.Ref('BrowserSessionCreateRequest') as unknown as typeof BrowserSessionCreateRequest,
        response: authedResponses(
          { 200: Type.Ref('BrowserSessionResponse') },
          {
            429: "Your plan's browser sessions are all open (QUOTA_EXCEEDED): close one first",
            503: 'No browser could be started',
            507: 'The server is low on disk space (HOST_STORAGE_LOW)',
          },
        ),
      },
      ...requireAuthOrBodyKey,
    },
    async (request) => services.sandbox.browser.createSession(principalOf(request), request.body ?? {}),
  );
}
