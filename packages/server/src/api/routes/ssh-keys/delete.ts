/** DELETE /v1/ssh-keys/{key_id}: the key stops logging in at once. */
import { Type } from 'typebox';
import { auditActorOf } from '../../audit-context.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { SshKeyIdParams } from './schemas.ts';

export function registerDeleteSshKey(app: App, { services, requireAuth }: RouteContext): void {
  app.delete(
    '/v1/ssh-keys/:key_id',
    {
      schema: {
        tags: ['ssh-keys'],
        summary: 'Delete one of your SSH keys',
        security: BEARER_OR_API_KEY,
        params: SshKeyIdParams,
        response: authedResponses({ 204: Type.Null({ description: 'Deleted' }) }, { 404: 'No such key among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      await services.sshKeys.delete(principalOf(request).userId, request.params.key_id, auditActorOf(request));
      return reply.code(204).send();
    },
  );
}
