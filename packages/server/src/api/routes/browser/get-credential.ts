/** GET /v1/browser/credentials/{credential_id}: one stored credential, without its password. */
import { Type } from 'typebox';
import { BrowserCredentialIdParams } from '../../../contract/browser/index.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';

export function registerGetBrowserCredential(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/browser/credentials/:credential_id',
    {
      schema: {
        tags: ['browser'],
        summary: 'Get a browser credential',
        security: BEARER_OR_API_KEY,
        params: BrowserCredentialIdParams,
        response: authedResponses({ 200: Type.Ref('BrowserCredentialRecord') }, { 404: 'No such credential among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => services.sandbox.browser.getCredential(principalOf(request), request.params.credential_id),
  );
}
