/** GET /v1/ssh-keys/{key_id}: one of the caller's SSH keys; another user's key id answers 404. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { SshKeyIdParams, toSshKeyRecord } from './schemas.ts';

export function registerGetSshKey(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/ssh-keys/:key_id',
    {
      schema: {
        tags: ['ssh-keys'],
        summary: 'Get one of your SSH keys',
        security: BEARER_OR_API_KEY,
        params: SshKeyIdParams,
        response: authedResponses({ 200: Type.Ref('SshKeyRecord') }, { 404: 'No such key among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => toSshKeyRecord(await services.sshKeys.get(principalOf(request).userId, request.params.key_id)),
  );
}
