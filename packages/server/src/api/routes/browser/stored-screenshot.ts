/** GET /v1/browser/screenshot/{usage_id}: a screenshot kept from a render. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY, RecordId } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';

export function registerStoredScreenshot(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/browser/screenshot/:usage_id',
    {
      schema: {
        tags: ['browser'],
        summary: 'A stored screenshot',
        description: 'The screenshot of one of your renders (its `usage_id`), base64 in `screenshot`, while retention keeps it (`expires_at`).',
        security: BEARER_OR_API_KEY,
        params: Type.Object({ usage_id: RecordId('A usage record of yours (`usage_id` of a render)') }),
        response: authedResponses({ 200: Type.Ref('BrowserStoredScreenshot') }, { 404: 'No such usage record among yours, or no screenshot is kept for it' }),
      },
      onRequest: requireAuth,
    },
    async (request) => services.sandbox.browser.storedScreenshot(principalOf(request), request.params.usage_id),
  );
}
