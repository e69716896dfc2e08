/** PATCH /v1/browser/credentials/{credential_id}: change a credential's username, password or allowed hosts. */
import { Type } from 'typebox';
import { BrowserCredentialIdParams, type BrowserCredentialUpdateRequest } from '../../../contract/browser/index.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';

export function registerUpdateBrowserCredential(app: App, { services, requireAuth }: RouteContext): void {
  app.patch(
    '/v1/browser/credentials/:credential_id',
    {
      schema: {
        tags: ['browser'],
        summary: 'Update a browser credential',
        description: 'Absent fields are kept; `allowed_hosts` replaces the whole list. The name cannot change.',
        security: BEARER_OR_API_KEY,
        params: BrowserCredentialIdParams,
        body: Type.Ref('BrowserCredentialUpdateRequest') as unknown as typeof BrowserCredentialUpdateRequest,
        response: authedResponses({ 200: Type.Ref('BrowserCredentialRecord') }, { 404: 'No such credential among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => services.sandbox.browser.updateCredential(principalOf(request), request.params.credential_id, request.body),
  );
}
