/** GET /v1/ssh-keys: the caller's SSH keys (never another user's). */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toSshKeyRecord } from './schemas.ts';

export function registerListSshKeys(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/ssh-keys',
    {
      schema: {
        tags: ['ssh-keys'],
        summary: 'List your SSH keys',
        security: BEARER_OR_API_KEY,
        response: authedResponses({ 200: Type.Array(Type.Ref('SshKeyRecord')) }),
      },
      onRequest: requireAuth,
    },
    async (request) => (await services.sshKeys.list(principalOf(request).userId)).map(toSshKeyRecord),
  );
}
