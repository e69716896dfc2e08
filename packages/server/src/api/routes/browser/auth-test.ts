/** POST /v1/browser/auth/test: check that a key works for the browser operations, and whether a browser is available. */
import { Type } from 'typebox';
import type { BrowserAuthTestRequest } from '../../../contract/browser/index.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';

export function registerBrowserAuthTest(app: App, { services, requireAuthOrBodyKey }: RouteContext): void {
  app.post(
    '/v1/browser/auth/test',
    {
      schema: {
        tags: ['browser'],
        summary: 'Test browser authentication',
        description:
          "Answers who the key belongs to, the plan, and whether a browser can be started now. A bad key is 401 as everywhere. The key may come in a header or in the body's `api_key`; the body is optional.",
        security: BEARER_OR_API_KEY,
        body: Type.Union([Type.Ref('BrowserAuthTestRequest'), Type.Null()]) as unknown as typeof BrowserAuthTestRequest,
        response: authedResponses({ 200: Type.Ref('BrowserAuthTestResponse') }),
      },
      ...requireAuthOrBodyKey,
    },
    async (request) => services.sandbox.browser.authTest(principalOf(request)),
  );
}
