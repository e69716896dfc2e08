/** POST /v1/browser/render: load a page once in a fresh browser and answer its screenshot, HTML or text. */
import { Type } from 'typebox';
import { renderRequestProblems, type BrowserRenderRequest } from '../../../contract/browser/index.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { refuseProblems } from './interactions.ts';

export function registerBrowserRender(app: App, { services, requireAuthOrBodyKey }: RouteContext): void {
  app.post(
    '/v1/browser/render',
    {
      schema: {
        tags: ['browser'],
        summary: 'Render a page once (screenshot, HTML, text)',
        description:
          'Loads `url` (or the inline `html`) in a fresh browser of `width`×`height`, waits for `wait_until` and `wait_for_selector` (together at most `wait_timeout` milliseconds), runs `actions` in order, and answers a screenshot (base64), the HTML and the readable text as asked. ' +
          'No session is left behind. Each render is a usage record whose `usage_id` finds its stored screenshot again (`GET /v1/browser/screenshot/{usage_id}`).',
        security: BEARER_OR_API_KEY,
        body: Type.Ref('BrowserRenderRequest') as unknown as typeof BrowserRenderRequest,
        response: authedResponses(
          { 200: Type.Ref('BrowserRenderResponse') },
          {
            400: 'The page could not be loaded (NAVIGATION_FAILED)',
            404: "An action's selector matched no element (ELEMENT_NOT_FOUND, with `selector`)",
            408: 'Loading, waiting or an action took longer than allowed (BROWSER_TIMEOUT)',
            429: "Your plan's browsers are all in use (QUOTA_EXCEEDED)",
            503: 'No browser could be started',
            507: 'The server is low on disk space (HOST_STORAGE_LOW)',
          },
        ),
      },
      ...requireAuthOrBodyKey,
    },
    async (request) => {
      refuseProblems(renderRequestProblems(request.body));
      return services.sandbox.browser.render(principalOf(request), request.body);
    },
  );
}
