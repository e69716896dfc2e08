/** DELETE /v1/browser/credentials/{credential_id}: forget a stored credential. */
import { Type } from 'typebox';
import { BrowserCredentialIdParams } from '../../../contract/browser/index.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';

export function registerDeleteBrowserCredential(app: App, { services, requireAuth }: RouteContext): void {
  app.delete(
    '/v1/browser/credentials/:credential_id',
    {
      schema: {
        tags: ['browser'],
        summary: 'Delete a browser credential',
        description: 'The username and password are deleted; pages it was filled into keep what they got.',
        security: BEARER_OR_API_KEY,
        params: BrowserCredentialIdParams,
        response: authedResponses({ 204: Type.Null({ description: 'Deleted' }) }, { 404: 'No such credential among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      await services.sandbox.browser.deleteCredential(principalOf(request), request.params.credential_id);
      return reply.code(204).send();
    },
  );
}
