/** POST /v1/browser/credentials: store a login that `fill-credential` fills into pages of its allowed hosts. */
import { Type } from 'typebox';
import type { BrowserCredentialCreateRequest } from '../../../contract/browser/index.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';

export function registerCreateBrowserCredential(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/v1/browser/credentials',
    {
      schema: {
        tags: ['browser'],
        summary: 'Store a credential for browser logins',
        description:
          'Keeps a username and password that `POST /v1/browser/interactions/fill-credential` fills into login forms on `allowed_hosts` only. The password is never shown again: no answer or list has it.',
        security: BEARER_OR_API_KEY,
        body: Type.Ref('BrowserCredentialCreateRequest') as unknown as typeof BrowserCredentialCreateRequest,
        response: authedResponses({ 201: Type.Ref('BrowserCredentialRecord') }, { 409: 'You have a credential of this name' }),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      const credential = await services.sandbox.browser.createCredential(principalOf(request), request.body);
      reply.code(201);
      return credential;
    },
  );
}
